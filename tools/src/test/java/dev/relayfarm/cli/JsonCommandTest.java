package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.serde.FileSystemBlobStore;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code relayc json}: Relay text in, JSON out, and back to the same text. */
class JsonCommandTest {
    static final com.networknt.schema.Schema SCHEMA = loadSchema();

    static com.networknt.schema.Schema loadSchema() {
        try {
            JsonNode node = IrJson.parse(Files.readString(Path.of("..", "schemas", "ir.schema.json")));
            return com.networknt.schema.SchemaRegistry.withDefaultDialect(com.networknt.schema.SpecificationVersion.DRAFT_2020_12).getSchema(node);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The text format's own example programs (ADTs, match, refs, shadowing, metadata constants...). */
    static Stream<Path> relayFiles() throws IOException {
        Path dir = Path.of("..", "shared-ir", "src", "test", "resources", "relay");
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> list = files.filter(p -> p.toString().endsWith(".relay")).sorted().toList();
            assertFalse(list.isEmpty(), "no .relay examples in " + dir);
            return list.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("relayFiles")
    void textToJsonAndBackGivesTheSameProgram(Path file, @TempDir Path tmp) throws IOException {
        String source = Files.readString(file);
        IRModule parsed = RelayParser.parseModule(source, file.toString());

        CliRun toJson = CliRun.relayc("json", file.toString());
        assertEquals(0, toJson.exitCode(), toJson.err());
        JsonNode doc = IrJson.parse(toJson.out());
        assertEquals("relayfarm.ir", doc.get("format").asText());
        var schemaErrors = SCHEMA.validate(doc);
        assertTrue(schemaErrors.isEmpty(), () -> file + ": schema errors " + schemaErrors);
        Optional<StructuralEquality.Mismatch> d = StructuralEquality.diff(parsed, IrJson.fromJson(toJson.out()));
        assertTrue(d.isEmpty(), () -> file + ": " + d.get().message());

        Path json = tmp.resolve("m.json");
        Files.writeString(json, toJson.out());
        CliRun back = CliRun.relayc("json", "--to-text", json.toString());
        assertEquals(0, back.exitCode(), back.err());
        assertEquals(RelayPrinter.print(parsed), back.out(), "text -> json -> text prints the same program");
        Optional<StructuralEquality.Mismatch> d2 = StructuralEquality.diff(parsed, RelayParser.parseModule(back.out(), "back.relay"));
        assertTrue(d2.isEmpty(), () -> file + " after --to-text: " + d2.get().message());
    }

    static String bigConstantProgram() {
        byte[] data = new byte[32 * 32 * 4];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7);
        return """
                #[version = "0.0.5"]
                def @main(%x: Tensor[(32, 32), float32]) -> Tensor[(32, 32), float32] {
                  add(%x, meta[relay.Constant][0])
                }

                #[metadata]
                {
                  "relay.Constant": [
                    {"dtype": "float32", "shape": [32, 32], "data": "DATA"}
                  ]
                }
                """.replace("DATA", Base64.getEncoder().encodeToString(data));
    }

    @Test
    void inlinesEverythingByDefaultAndUsesTheBlobStoreWithBlobs(@TempDir Path tmp) throws IOException {
        Path relay = tmp.resolve("big.relay");
        Files.writeString(relay, bigConstantProgram());
        IRModule parsed = RelayParser.parseModule(bigConstantProgram(), relay.toString());

        CliRun inline = CliRun.relayc("json", relay.toString());
        assertEquals(0, inline.exitCode(), inline.err());
        assertFalse(inline.out().contains("\"blob\""), "no --blobs: everything inline");
        assertTrue(inline.out().length() > 4096);

        Path blobs = tmp.resolve("blobs");
        CliRun withBlobs = CliRun.relayc("json", relay.toString(), "--blobs", blobs.toString(), "--pretty");
        assertEquals(0, withBlobs.exitCode(), withBlobs.err());
        JsonNode doc = IrJson.parse(withBlobs.out());
        String sha = null;
        for (JsonNode n : doc.get("nodes")) if (n.has("blob")) sha = n.get("blob").asText();
        assertTrue(sha != null, withBlobs.out());
        assertTrue(Files.isRegularFile(blobs.resolve(sha.substring(0, 2)).resolve(sha)));
        assertTrue(withBlobs.out().length() < 2000, "the 4 KiB tensor stays out of the JSON");
        assertTrue(StructuralEquality.equal(parsed, IrJson.read(withBlobs.out(), new FileSystemBlobStore(blobs))));

        Path json = tmp.resolve("big.json");
        Files.writeString(json, withBlobs.out());
        CliRun back = CliRun.relayc("json", "--to-text", json.toString(), "--blobs", blobs.toString());
        assertEquals(0, back.exitCode(), back.err());
        assertEquals(RelayPrinter.print(parsed), back.out());

        CliRun noStore = CliRun.relayc("json", "--to-text", json.toString());
        assertEquals(1, noStore.exitCode());
        assertTrue(noStore.err().contains("$.nodes[") && noStore.err().contains(sha) && noStore.err().contains("--blobs"), noStore.err());
    }

    @Test
    void errorsNameTheFileAndThePlace(@TempDir Path tmp) throws IOException {
        Path bad = tmp.resolve("bad.relay");
        Files.writeString(bad, "#[version = \"0.0.5\"]\ndef @main(%x) {\n  add(%x, %y)\n}\n");
        CliRun syntax = CliRun.relayc("json", bad.toString());
        assertEquals(1, syntax.exitCode());
        assertTrue(syntax.err().contains("bad.relay:3:"), syntax.err());

        Path badJson = tmp.resolve("bad.json");
        Files.writeString(badJson, "{\"format\": \"relayfarm.ir\", \"version\": 7}");
        CliRun version = CliRun.relayc("json", "--to-text", badJson.toString());
        assertEquals(1, version.exitCode());
        assertEquals("relayc json: " + badJson + ": $.version: unsupported version 7 (this reader reads version 1)", version.err().strip());

        CliRun missing = CliRun.relayc("json", tmp.resolve("nope.relay").toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no such file"), missing.err());
    }

    @Test
    void noSpansLeavesFileNamesOut(@TempDir Path tmp) throws IOException {
        Path relay = tmp.resolve("s.relay");
        Files.writeString(relay, "#[version = \"0.0.5\"]\ndef @main(%x: float32) { add(%x, %x) }\n", StandardCharsets.UTF_8);
        CliRun with = CliRun.relayc("json", relay.toString());
        CliRun without = CliRun.relayc("json", relay.toString(), "--no-spans");
        assertEquals(0, with.exitCode(), with.err());
        assertTrue(with.out().contains("s.relay"), with.out());
        assertFalse(without.out().contains("s.relay"), without.out());
    }
}
