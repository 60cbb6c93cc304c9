package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.relayfarm.ir.IRModule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Documents the writer produces satisfy schemas/ir.schema.json, and the schema rejects broken ones. */
class IrJsonSchemaTest {
    static Schema schema;

    @BeforeAll
    static void loadSchema() throws IOException {
        // Surefire runs in the module directory; the schema lives at the repository root.
        Path file = Path.of("..", "schemas", "ir.schema.json");
        JsonNode node = IrJson.MAPPER.readTree(Files.readString(file));
        assertEquals("https://json-schema.org/draft/2020-12/schema", node.get("$schema").asText());
        schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(node);
    }

    static List<Error> validate(JsonNode doc) {
        return schema.validate(doc);
    }

    static void assertValid(IRModule m, BlobSink sink, IrJson.Options options) {
        JsonNode doc = IrJson.writeTree(m, sink, options);
        List<Error> errors = validate(doc);
        assertTrue(errors.isEmpty(), () -> errors.size() + " schema errors, first: " + errors.subList(0, Math.min(5, errors.size())));
    }

    @Test
    void everyKindModuleIsValid() {
        assertValid(SerdeFixtures.everything(), BlobSink.NONE, IrJson.Options.INLINE_ALL);
        assertValid(SerdeFixtures.everything(), BlobSink.NONE, IrJson.Options.INLINE_ALL.withSpans(false));
    }

    @Test
    void lowBitDtypesAreValid() {
        String src = "fn (%x: Tensor[(3), float8_e4m3fn], %q: Tensor[(3), int4]) { (cast(%x, dtype=\"float8_e5m2fnuz\", saturate=True), "
                + "cast(%x, dtype=\"float8_e8m0fnu\"), cast(%q, dtype=\"uint2\"), cast(%x, dtype=\"float4_e2m1fn\"), cast(%q, dtype=\"float8_e4m3fnuz\"), "
                + "cast(%x, dtype=\"float8_e5m2\"), cast(%q, dtype=\"int2\"), cast(%q, dtype=\"uint4\")) }";
        IRModule m = IRModule.fromMain((dev.relayfarm.ir.Function) dev.relayfarm.text.RelayParser.parseExpr(src));
        assertValid(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
    }

    @Test
    void blobReferencesAreValid() {
        assertValid(IrJsonBlobTest.module(IrJsonBlobTest.big()), new InMemoryBlobStore(), IrJson.Options.DEFAULT);
    }

    @Test
    void chainsAndEmptyModulesAreValid() {
        assertValid(SerdeFixtures.letChain(200), BlobSink.NONE, IrJson.Options.INLINE_ALL);
        assertValid(SerdeFixtures.callChain(200), BlobSink.NONE, IrJson.Options.INLINE_ALL);
        assertValid(IRModule.EMPTY, BlobSink.NONE, IrJson.Options.INLINE_ALL);
    }

    /** The schema is not vacuous: each breakage the reader rejects, the schema rejects too. */
    static void assertInvalid(Consumer<ObjectNode> breakIt, String expectedInMessages) {
        ObjectNode doc = (ObjectNode) IrJson.writeTree(SerdeFixtures.everything(), BlobSink.NONE, IrJson.Options.INLINE_ALL);
        assertTrue(validate(doc).isEmpty());
        breakIt.accept(doc);
        List<Error> errors = validate(doc);
        assertFalse(errors.isEmpty(), "schema accepted a broken document");
        assertTrue(errors.toString().contains(expectedInMessages), errors.toString());
    }

    @Test
    void schemaRejectsBrokenDocuments() {
        assertInvalid(d -> d.put("version", 2), "version");
        assertInvalid(d -> d.remove("nodes"), "nodes");
        assertInvalid(d -> ((ObjectNode) d.get("nodes").get(0)).put("node", "Lambda"), "nodes/0/node");
        assertInvalid(d -> ((ObjectNode) d.get("nodes").get(0)).put("bogus", 1), "bogus");
        assertInvalid(d -> ((ArrayNode) d.get("vars")).addObject().put("name", "v"), "id");
        assertInvalid(d -> ((ObjectNode) d.get("typeVars").get(0)).put("kind", "KIND"), "typeVars/0/kind");
        assertInvalid(d -> ((ObjectNode) d.get("nodes").get(12)).put("dtype", "float8"), "nodes/12/dtype");
        assertInvalid(d -> {
            for (JsonNode n : d.get("nodes")) {
                if (n.get("node").asText().equals("Constant")) {
                    ((ObjectNode) n).put("blob", "0".repeat(64)); // both data and blob
                    return;
                }
            }
        }, "one and only one");
        assertInvalid(d -> {
            for (JsonNode n : d.get("nodes")) {
                if (n.has("attrs")) {
                    ((ObjectNode) n.get("attrs")).putObject("f").put("float", "nan");
                    return;
                }
            }
        }, "attrs/f");
    }
}
