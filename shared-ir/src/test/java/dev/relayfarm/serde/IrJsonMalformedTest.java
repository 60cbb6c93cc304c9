package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Var;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Broken documents fail with the JSON path of the problem and a message naming it. */
class IrJsonMalformedTest {
    /**
     * fn (%x: Tensor[(2), float32]) { (add(%x, 1f), %x) } ; nodes: 0 Op add, 1 Var x, 2 Constant,
     * 3 Call, 4 Tuple, 5 Function.
     */
    static ObjectNode doc() {
        Var x = Var.fresh("x", SerdeFixtures.tensor(2));
        Function f = new Function(List.of(x), new Tuple(List.of(Call.op("add", x, new Constant(NDArray.scalar(1f))), x)));
        return (ObjectNode) IrJson.writeTree(IRModule.fromMain(f), BlobSink.NONE, IrJson.Options.INLINE_ALL);
    }

    static ObjectNode node(ObjectNode doc, int i) {
        return (ObjectNode) doc.get("nodes").get(i);
    }

    static IrJsonException fails(Consumer<ObjectNode> breakIt) {
        ObjectNode d = doc();
        IrJson.read(d.deepCopy(), BlobSource.NONE); // the unbroken document reads
        breakIt.accept(d);
        return assertThrows(IrJsonException.class, () -> IrJson.read(d, BlobSource.NONE));
    }

    static void assertError(String expectedMessage, IrJsonException e) {
        assertEquals(expectedMessage, e.getMessage());
    }

    @Test
    void fixtureLayoutIsWhatTheTestsAssume() {
        ArrayNode nodes = (ArrayNode) doc().get("nodes");
        assertEquals(List.of("Op", "Var", "Constant", "Call", "Tuple", "Function"),
                java.util.stream.StreamSupport.stream(nodes.spliterator(), false).map(n -> n.get("node").asText()).toList());
    }

    @Test
    void forwardOrDanglingNodeReference() {
        assertError("$.nodes[3].args[1]: unknown node id 40", fails(d -> ((ArrayNode) node(d, 3).get("args")).set(1, 40)));
        assertError("$.nodes[3].args[1]: unknown node id 4 (nodes may refer only to earlier nodes, here 0..2)",
                fails(d -> ((ArrayNode) node(d, 3).get("args")).set(1, 4)));
        assertError("$.nodes[4].fields[0]: unknown node id -1", fails(d -> ((ArrayNode) node(d, 4).get("fields")).set(0, -1)));
        assertError("$.nodes[3].callee: expected a node id (an integer), got \"add\"", fails(d -> node(d, 3).put("callee", "add")));
    }

    @Test
    void unknownVersionAndFormat() {
        assertError("$.version: unsupported version 2 (this reader reads version 1)", fails(d -> d.put("version", 2)));
        assertError("$.version: unsupported version \"1\" (this reader reads version 1)", fails(d -> d.put("version", "1")));
        assertError("$: missing field 'version'", fails(d -> d.remove("version")));
        assertError("$.format: expected \"relayfarm.ir\", got \"onnx\"", fails(d -> d.put("format", "onnx")));
    }

    @Test
    void newerVersionWithUnknownFieldsReportsTheVersion() {
        IrJsonException e = fails(d -> {
            d.put("version", 2);
            d.put("streams", 3);
        });
        assertEquals("$.version", e.path());
    }

    @Test
    void missingAndMistypedFields() {
        assertError("$: missing field 'nodes'", fails(d -> d.remove("nodes")));
        assertError("$.nodes[4]: missing field 'fields'", fails(d -> node(d, 4).remove("fields")));
        assertError("$.nodes: expected an array, got an object", fails(d -> d.putObject("nodes")));
        assertError("$.nodes[0].node: unknown node kind 'Lambda' (expected one of [Call, Constant, Constructor, Function, GlobalVar, If, Let, Match, Op, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var])",
                fails(d -> node(d, 0).put("node", "Lambda")));
        assertError("$.nodes[3]: unknown field 'kwargs' in a Call node", fails(d -> node(d, 3).putObject("kwargs")));
        assertError("$: unknown field 'extra' in the document", fails(d -> d.put("extra", true)));
    }

    @Test
    void badTableReferences() {
        assertError("$.nodes[1].var: unknown var id 7 (valid ids are 0..0)", fails(d -> node(d, 1).put("var", 7)));
        assertError("$.vars[0].type.type: unknown type kind 'Tensr' (expected one of [Func, GlobalTypeVar, Incomplete, Ref, Tensor, Tuple, TypeCall, TypeVar])",
                fails(d -> ((ObjectNode) d.get("vars").get(0).get("type")).put("type", "Tensr")));
        assertError("$.vars[0].type.ref: unknown type variable id 0 (there are no type variables)",
                fails(d -> ((ObjectNode) d.get("vars").get(0)).putObject("type").put("type", "TypeVar").put("ref", 0)));
        assertError("$.functions[0].node: global @main must be a Function node, got a Tuple", fails(d -> ((ObjectNode) d.get("functions").get(0)).put("node", 4)));
    }

    @Test
    void badConstants() {
        assertError("$.nodes[2].dtype: unknown dtype 'half'", fails(d -> node(d, 2).put("dtype", "half")));
        assertError("$.nodes[2].data: shape [] of float32 needs 4 bytes, got 3", fails(d -> node(d, 2).put("data", "AAAA")));
        IrJsonException b64 = fails(d -> node(d, 2).put("data", "!!!!"));
        assertEquals("$.nodes[2].data", b64.path());
        assertTrue(b64.detail().startsWith("not valid base64"), b64.detail());
        assertError("$.nodes[2]: a Constant needs exactly one of 'data' (inline) or 'blob' (a SHA-256 key)", fails(d -> node(d, 2).remove("data")));
        assertError("$.nodes[2].blob: not a SHA-256 blob key (64 lower-case hex digits): 'abc'", fails(d -> {
            node(d, 2).remove("data");
            node(d, 2).put("blob", "abc");
        }));
        assertError("$.nodes[2].shape[0]: expected a non-negative integer, got -3", fails(d -> node(d, 2).putArray("shape").add(-3)));
    }

    @Test
    void badTypesDimsAndAttrs() {
        ObjectNode d0 = doc();
        JsonNode tensorType = d0.get("vars").get(0).get("type");
        assertEquals("Tensor", tensorType.get("type").asText());
        assertError("$.vars[0].type.shape[0]: expected a dimension (an integer, \"?\", {\"sym\": ...} or {\"op\": ...}), got \"n\"",
                fails(d -> ((ArrayNode) d.get("vars").get(0).get("type").get("shape")).set(0, "n")));
        assertError("$.vars[0].type.shape[0].op: unknown dimension operator 'pow' (expected add, sub, mul, floor_div or floor_mod)",
                fails(d -> {
                    ArrayNode shape = (ArrayNode) d.get("vars").get(0).get("type").get("shape");
                    shape.set(0, shape.objectNode().put("op", "pow").put("lhs", 1).put("rhs", 2));
                }));
        assertError("$.nodes[3].attrs.axis.float: expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got \"nan\"",
                fails(d -> node(d, 3).putObject("attrs").putObject("axis").put("float", "nan")));
        assertError("$.nodes[3].attrs['odd key']: expected an attribute value (integer, {\"float\": ...}, string, boolean, null or a list), got an object",
                fails(d -> node(d, 3).putObject("attrs").putObject("odd key").put("x", 1)));
    }

    @Test
    void badAdtsAndConstructors() {
        IRModule m = SerdeFixtures.everything();
        ObjectNode d = (ObjectNode) IrJson.writeTree(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
        int consNode = -1;
        for (int i = 0; i < d.get("nodes").size(); i++) {
            if (d.get("nodes").get(i).get("node").asText().equals("Constructor")) {
                consNode = i;
                break;
            }
        }
        ((ObjectNode) d.get("nodes").get(consNode)).put("name", "Snoc");
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.read(d, BlobSource.NONE));
        assertEquals("$.nodes[" + consNode + "].name: type List has no constructor Snoc", e.getMessage());

        ObjectNode d2 = (ObjectNode) IrJson.writeTree(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
        ((ArrayNode) d2.get("adts")).remove(0);
        IrJsonException e2 = assertThrows(IrJsonException.class, () -> IrJson.read(d2, BlobSource.NONE));
        assertTrue(e2.getMessage().contains("unknown type List (not in $.adts)") || e2.getMessage().contains("type variable id"), e2.getMessage());
    }

    @Test
    void notJsonAtAll() {
        IrJsonException e = assertThrows(IrJsonException.class, () -> IrJson.fromJson("{\"format\": \"relayfarm.ir\", "));
        assertEquals("$", e.path());
        assertTrue(e.detail().startsWith("not valid JSON at line 1, column"), e.detail());
        IrJsonException dup = assertThrows(IrJsonException.class, () -> IrJson.fromJson("{\"format\": 1, \"format\": 2}"));
        assertTrue(dup.detail().contains("Duplicate field 'format'"), dup.detail());
        assertError("$: empty input: expected a JSON document", assertThrows(IrJsonException.class, () -> IrJson.fromJson("")));
        assertError("$: expected an object, got an array", assertThrows(IrJsonException.class, () -> IrJson.fromJson("[1]")));
    }
}
