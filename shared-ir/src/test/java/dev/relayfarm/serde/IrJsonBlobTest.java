package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Var;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IrJsonBlobTest {
    /** 32x32 float32 = 4096 bytes: above the default 1024-byte inline limit. */
    static NDArray big() {
        double[] v = new double[32 * 32];
        for (int i = 0; i < v.length; i++) v[i] = Math.sin(i);
        return NDArray.fromDoubles(DType.FLOAT32, new int[] {32, 32}, v);
    }

    static IRModule module(NDArray bigArray) {
        Var x = Var.fresh("x");
        return IRModule.fromMain(new Function(List.of(x),
                new Tuple(List.of(new Constant(bigArray), new Constant(NDArray.scalar(2f)), x))));
    }

    static JsonNode constantNode(JsonNode doc, String dtype, int rank) {
        for (JsonNode n : doc.get("nodes")) {
            if (n.get("node").asText().equals("Constant") && n.get("dtype").asText().equals(dtype) && n.get("shape").size() == rank) return n;
        }
        throw new AssertionError("no " + dtype + " constant of rank " + rank + " in " + doc);
    }

    @Test
    void bigConstantGoesToTheSinkAndTheDocumentHoldsItsSha() {
        NDArray a = big();
        InMemoryBlobStore store = new InMemoryBlobStore();
        String json = IrJson.write(module(a), store, IrJson.Options.DEFAULT);
        assertEquals(java.util.Set.of(a.sha256()), store.keys());
        JsonNode doc = IrJson.parse(json);
        JsonNode bigNode = constantNode(doc, "float32", 2);
        assertEquals(a.sha256(), bigNode.get("blob").asText());
        assertFalse(bigNode.has("data"));
        assertTrue(constantNode(doc, "float32", 0).has("data"), "the scalar stays inline");
        assertTrue(json.length() < 2000, "the 4 KiB tensor must not travel inline: " + json.length() + " chars");

        IRModule back = IrJson.read(json, store);
        assertTrue(StructuralEquality.equal(module(a), back));
        NDArray read = ((Constant) ((Tuple) back.main().orElseThrow().body()).fields().get(0)).data();
        assertTrue(a.contentEquals(read));
    }

    @Test
    void thresholdIsConfigurableAndInclusive() {
        NDArray a = NDArray.zeros(DType.FLOAT32, 4); // 16 bytes
        InMemoryBlobStore store = new InMemoryBlobStore();
        IrJson.write(module(a), store, IrJson.Options.DEFAULT.withInlineLimit(16));
        assertEquals(0, store.size(), "exactly at the limit stays inline");
        IrJson.write(module(a), store, IrJson.Options.DEFAULT.withInlineLimit(15));
        // Both the 16-byte tensor and nothing else (the 4-byte scalar stays inline).
        assertEquals(java.util.Set.of(a.sha256()), store.keys());
        IrJson.write(module(a), store, IrJson.Options.DEFAULT.withInlineLimit(0));
        assertEquals(2, store.size(), "limit 0 sends every non-empty tensor to the sink");
    }

    @Test
    void inlineAllNeedsNoSink() {
        String json = IrJson.toJson(module(big()));
        assertFalse(json.contains("\"blob\""));
        assertTrue(StructuralEquality.equal(module(big()), IrJson.fromJson(json)));
    }

    @Test
    void aBlobWithoutASinkIsAClearError() {
        BlobStoreException e = assertThrows(BlobStoreException.class, () -> IrJson.write(module(big()), BlobSink.NONE, IrJson.Options.DEFAULT));
        assertTrue(e.getMessage().contains("4096 bytes") || e.getMessage().contains("no blob sink"), e.getMessage());
    }

    @Test
    void missingBlobNamesTheNodeAndTheKey() {
        NDArray a = big();
        String json = IrJson.write(module(a), new InMemoryBlobStore(), IrJson.Options.DEFAULT);
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.read(json, new InMemoryBlobStore()));
        assertTrue(e.path().matches("\\$\\.nodes\\[\\d+]\\.blob"), e.path());
        assertTrue(e.getMessage().contains(a.sha256()) && e.getMessage().contains("not found"), e.getMessage());
        IrJsonException none = assertThrows(IrJsonException.class, () -> IrJson.fromJson(json));
        assertTrue(none.getMessage().contains("no blob source was given"), none.getMessage());
    }

    @Test
    void corruptBlobFromAnySourceIsASha256Mismatch() {
        NDArray a = big();
        InMemoryBlobStore store = new InMemoryBlobStore();
        String json = IrJson.write(module(a), store, IrJson.Options.DEFAULT);
        // A source that flips one byte: IrJson re-hashes whatever it gets.
        BlobSource flipping = sha -> {
            byte[] b = store.get(sha);
            b[b.length - 1] ^= 1;
            return b;
        };
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.read(json, flipping));
        assertTrue(e.getMessage().contains("sha mismatch") && e.getMessage().contains("corrupt"), e.getMessage());
    }

    @Test
    void corruptFileInTheFileSystemStoreIsReported(@TempDir Path dir) throws IOException {
        NDArray a = big();
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        String json = IrJson.write(module(a), store, IrJson.Options.DEFAULT);
        Path file = store.pathOf(a.sha256());
        byte[] bytes = Files.readAllBytes(file);
        bytes[100] ^= 0x40;
        Files.write(file, bytes);
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.read(json, store));
        assertTrue(e.getMessage().contains("sha mismatch") && e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void blobWhoseHeaderDisagreesWithTheDocumentIsRejected() {
        NDArray a = big();
        InMemoryBlobStore store = new InMemoryBlobStore();
        String json = IrJson.write(module(a), store, IrJson.Options.DEFAULT);
        // Same bytes, but the document now claims a different shape: the blob's own header disagrees.
        String lied = json.replace("\"shape\":[32,32],\"blob\"", "\"shape\":[16,64],\"blob\"");
        assertTrue(!lied.equals(json));
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.read(lied, store));
        assertTrue(e.getMessage().contains("float32[32, 32]") && e.getMessage().contains("float32[16, 64]"), e.getMessage());
    }

    @Test
    void blobBytesHashToTheTensorSha() {
        NDArray a = big();
        byte[] blob = TensorBlob.encode(a);
        assertEquals(a.sha256(), Sha256.hex(blob), "the blob key is both the tensor's sha256() and the plain hash of the blob");
        assertTrue(a.contentEquals(TensorBlob.decode(blob, a.dtype(), a.shape())));
    }

    @Test
    void equalConstantsShareOneBlob(@TempDir Path dir) {
        NDArray a = big();
        NDArray copy = NDArray.fromBytes(a.dtype(), a.shape(), a.toBytes());
        IRModule m = IRModule.fromMain(new Function(List.of(), new Tuple(List.of(new Constant(a), new Constant(copy)))));
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        String json = IrJson.write(m, store, IrJson.Options.DEFAULT);
        assertTrue(StructuralEquality.equal(m, IrJson.read(json, store)));
        assertTrue(store.contains(a.sha256()));
    }
}
