package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralEquality.Mismatch;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.serde.BlobSink;
import dev.relayfarm.serde.BlobSource;
import dev.relayfarm.serde.InMemoryBlobStore;
import dev.relayfarm.serde.IrJson;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** JSON write → read gives a structurally equal module, blobs inline or in a blob store. */
class JsonRoundTripTest {
    @Test
    void inlineBlobsRoundTrip() {
        for (long seed = 0; seed < GeneratorTest.MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            String json = IrJson.write(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
            check(seed, m, read(json, BlobSource.NONE, seed), json);
        }
    }

    @Test
    void blobStoreRoundTrip() {
        int external = 0;
        for (long seed = 0; seed < GeneratorTest.MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            InMemoryBlobStore store = new InMemoryBlobStore();
            // Limit 0: every constant goes to the store, scalars included.
            String json = IrJson.write(m, store, IrJson.Options.DEFAULT.withInlineLimit(0));
            check(seed, m, read(json, store, seed), json);
            Set<String> keys = new HashSet<>();
            for (Constant c : constants(m)) keys.add(c.data().sha256());
            assertEquals(keys, store.keys(), "seed " + seed + ": the store holds exactly the module's distinct tensors");
            external += keys.size();
        }
        assertTrue(external > GeneratorTest.MODULES, "only " + external + " tensors went to the store");
    }

    @Test
    void readingWithoutTheStoreFailsNamingTheBlob() {
        IRModule m = RandomModules.letChain(3);
        InMemoryBlobStore store = new InMemoryBlobStore();
        String json = IrJson.write(m, store, IrJson.Options.DEFAULT.withInlineLimit(0));
        RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> IrJson.read(json, BlobSource.NONE));
        String key = store.keys().iterator().next();
        assertTrue(store.keys().stream().anyMatch(k -> e.getMessage().contains(k)), e.getMessage() + " should name one of " + store.keys() + " e.g. " + key);
    }

    private static IRModule read(String json, BlobSource blobs, long seed) {
        try {
            return IrJson.read(json, blobs);
        } catch (RuntimeException e) {
            throw new AssertionError("seed " + seed + ": written JSON does not read back: " + e.getMessage() + "\n--- json ---\n" + json, e);
        }
    }

    private static void check(long seed, IRModule m, IRModule back, String json) {
        Optional<Mismatch> d = StructuralEquality.diff(m, back);
        if (d.isPresent()) {
            fail("seed " + seed + ": JSON write -> read differs\n" + d.get().message() + "\n--- json ---\n" + json);
        }
        assertEquals(StructuralHash.hash(m), StructuralHash.hash(back), "seed " + seed);
        assertEquals(List.of(), WellFormed.problems(back), "seed " + seed);
    }

    private static List<Constant> constants(IRModule m) {
        List<Constant> out = new java.util.ArrayList<>();
        for (Function f : m.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof Constant c) out.add(c);
        }
        return out;
    }
}
