package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue #13: subgraphs nested in subgraphs (an If's then_branch holding another If ...) cannot
 * overflow the stack: protobuf's default recursion limit (100 messages, three per subgraph level)
 * stops the parse, and the reader reports it as a malformed model.
 */
class OnnxNestingTest {
    @Test
    void subgraphsNestedPastProtobufsRecursionLimitAreAFormatError() {
        GraphProto g = GraphProto.newBuilder().setName("leaf").build();
        for (int i = 0; i < 10_000; i++) {
            NodeProto ifNode = NodeProto.newBuilder().setOpType("If").addAttribute(
                    AttributeProto.newBuilder().setName("then_branch").setType(AttributeProto.AttributeType.GRAPH).setG(g)).build();
            g = GraphProto.newBuilder().setName("g" + i).addNode(ifNode).build();
        }
        // protobuf's serializer recurses per message (only its parser is limited): write on a big stack.
        byte[][] bytes = new byte[1][];
        GraphProto top = g;
        Thread t = new Thread(null, () -> bytes[0] = ModelProto.newBuilder().setGraph(top).build().toByteArray(), "serialize", 512L << 20);
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxModels.parse(bytes[0], "deep.onnx"));
        assertTrue(e.getMessage().startsWith("deep.onnx: not a valid ONNX model:"), e.getMessage());
        assertTrue(e.getMessage().contains("too many levels of nesting"), e.getMessage());
    }

    /** {@code levels} Ifs, each in the then-branch of the next; the innermost negates x. */
    static byte[] nestedIfs(int levels) {
        int f = TensorProto.DataType.FLOAT_VALUE;
        GraphProto.Builder inner = GraphProto.newBuilder().setName("leaf")
                .addNode(node("Neg", "neg", List.of("x"), List.of("y0"))).addOutput(tensor("y0", f, 2));
        for (int i = 1; i <= levels; i++) {
            GraphProto.Builder els = GraphProto.newBuilder().setName("else" + i)
                    .addNode(node("Identity", "id" + i, List.of("x"), List.of("e" + i))).addOutput(tensor("e" + i, f, 2));
            inner = GraphProto.newBuilder().setName(i == levels ? "main" : "then" + i)
                    .addNode(node("If", "if" + i, List.of("c"), List.of("y" + i),
                            ControlFlowImportTest.graph("then_branch", inner), ControlFlowImportTest.graph("else_branch", els)))
                    .addOutput(tensor("y" + i, f, 2));
        }
        return model(13, inner.addInput(tensor("c", TensorProto.DataType.BOOL_VALUE, 1)).addInput(tensor("x", f, 2))).toByteArray();
    }

    /**
     * Ifs nested as deep as protobuf's limit allows import, and what the importer makes stays within
     * the text and JSON nesting limits: it type-checks, prints and parses back, round-trips through
     * JSON and runs — on a 512 KiB stack. One level more is a format error.
     */
    @Test
    void subgraphsAsDeepAsProtobufAllowsImportAndStayWithinTheIrLimits() throws Throwable {
        int deepest = 1;
        while (parses(nestedIfs(deepest + 1))) deepest++;
        assertTrue(deepest >= 30, "protobuf stopped at " + deepest + " levels");
        byte[] bytes = nestedIfs(deepest);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                IRModule m = OnnxImporter.importModel(OnnxModels.parse(bytes, "nested.onnx"), "nested.onnx", null, ImportOptions.DEFAULT);
                TypeInference.infer(m);
                IRModule back = RelayParser.parseModule(RelayPrinter.print(m), "nested.relay");
                IrJson.fromJson(IrJson.toJson(back));
                NDArray yes = NDArray.fromLongs(DType.BOOL, new int[] {1}, new long[] {1});
                NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {1, -2});
                assertArrayEquals(new float[] {-1, 2}, ((TensorValue) Interpreter.runMain(back, yes, x)).data().floatData());
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "small-stack", 512 * 1024);
        t.start();
        t.join();
        if (failure.get() != null) throw failure.get();
        byte[] deeper = nestedIfs(deepest + 1);
        assertThrows(OnnxFormatException.class, () -> OnnxModels.parse(deeper, "deeper.onnx"));
    }

    private static boolean parses(byte[] bytes) {
        try {
            OnnxModels.parse(bytes, "probe.onnx");
            return true;
        } catch (OnnxFormatException e) {
            return false;
        }
    }
}
