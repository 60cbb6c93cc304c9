package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.FunctionProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Type;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

/** If / Loop / Scan and model-local functions: imported, run by the interpreter, checked by full type inference. */
class ControlFlowImportTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;
    private static final int B = TensorProto.DataType.BOOL_VALUE;

    static AttributeProto graph(String name, GraphProto.Builder g) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.GRAPH).setG(g).build();
    }

    static AttributeProto integer(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    static AttributeProto real(String name, float v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOAT).setF(v).build();
    }

    static NDArray floats(int[] shape, double... v) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, v);
    }

    private static IRModule load(ModelProto m) {
        IRModule module = OnnxImporter.importModel(m, "cf.onnx", null, ImportOptions.DEFAULT);
        InferResult r = TypeInference.infer(module); // the whole program type-checks, not only node by node
        assertNotNull(r.typeOf(new dev.relayfarm.ir.GlobalVar("main")));
        return module;
    }

    private static float[] out(Value v, int i) {
        Value f = v instanceof TupleValue t ? t.fields().get(i) : v;
        return ((TensorValue) f).data().floatData();
    }

    /**
     * y = If(c) { r * 2 } else { r + 10 } where r = Relu(x) is computed outside and also used after
     * the If: r is let-bound once in the outer graph and both branches refer to that variable.
     */
    @Test
    void ifBranchesUseOuterValues() {
        GraphProto.Builder then = GraphProto.newBuilder().setName("then")
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(2f), "two"))
                .addNode(node("Mul", "m", List.of("r", "two"), List.of("t")))
                .addOutput(tensor("t", F, 3));
        GraphProto.Builder els = GraphProto.newBuilder().setName("else")
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(10f), "ten"))
                .addNode(node("Add", "a", List.of("r", "ten"), List.of("e")))
                .addOutput(tensor("e", F, 3));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("c", B, 1))
                .addInput(tensor("x", F, 3))
                .addNode(node("Relu", "relu", List.of("x"), List.of("r")))
                .addNode(node("If", "if", List.of("c"), List.of("y"), graph("then_branch", then), graph("else_branch", els)))
                .addNode(node("Sub", "after", List.of("y", "r"), List.of("z")))
                .addOutput(tensor("z", F, 3));
        IRModule m = load(model(13, g));
        long ifs = ExprTraversal.postOrder(m.main().orElseThrow()).stream().filter(e -> e instanceof If).count();
        assertEquals(1, ifs);
        assertInstanceOf(Let.class, m.main().orElseThrow().body(), "outer values used by a branch are let-bound");
        NDArray x = floats(new int[] {3}, -1, 2, 3);
        NDArray yes = NDArray.fromLongs(DType.BOOL, new int[] {1}, new long[] {1});
        NDArray no = NDArray.fromLongs(DType.BOOL, new int[] {1}, new long[] {0});
        assertArrayEquals(new float[] {0, 2, 3}, out(Interpreter.runMain(m, yes, x), 0)); // 2r - r
        assertArrayEquals(new float[] {10, 10, 10}, out(Interpreter.runMain(m, no, x), 0)); // r + 10 - r
    }

    /**
     * for (i = 0; i < M && cond; i++) { y = y + step; cond = y < 7; scan = y * i } with step computed
     * outside the loop: final y and the stacked scan output.
     */
    @Test
    void loopCarriesValuesAndStacksScanOutputs() {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("i", I64))
                .addInput(tensor("cond_in", B))
                .addInput(tensor("y_in", F, 2))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(7f), "seven"))
                .addNode(node("Add", "add", List.of("y_in", "step"), List.of("y_out")))
                .addNode(node("ReduceMax", "max", List.of("y_out"), List.of("m"), integer("keepdims", 0)))
                .addNode(node("Less", "less", List.of("m", "seven"), List.of("cond_out")))
                .addNode(node("Cast", "cast", List.of("i"), List.of("fi"), integer("to", F)))
                .addNode(node("Mul", "mul", List.of("y_out", "fi"), List.of("scan")))
                .addOutput(tensor("cond_out", B))
                .addOutput(tensor("y_out", F, 2))
                .addOutput(tensor("scan", F, 2));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("M", I64))
                .addInput(tensor("y0", F, 2))
                .addInput(tensor("s", F, 2))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(true), "yes"))
                .addNode(node("Abs", "abs", List.of("s"), List.of("step")))
                .addNode(node("Loop", "loop", List.of("M", "yes", "y0"), List.of("y", "stacked"), graph("body", body)))
                .addOutput(tensor("y", F, 2))
                .addOutput(tensor("stacked", F, "n", 2));
        IRModule m = load(model(13, g));
        NDArray y0 = floats(new int[] {2}, 0, 1);
        NDArray s = floats(new int[] {2}, -1, 2);
        // M = 10 but cond stops it: y = (1,3) cond, (2,5), (3,7) stop after the third iteration.
        Value v = Interpreter.runMain(m, NDArray.scalar(10L), y0, s);
        assertArrayEquals(new float[] {3, 7}, out(v, 0));
        assertArrayEquals(new float[] {0, 0, 2, 5, 6, 14}, out(v, 1));
        assertArrayEquals(new int[] {3, 2}, ((TensorValue) ((TupleValue) v).fields().get(1)).data().shape());
        // M = 0: no iteration, an empty scan output.
        Value none = Interpreter.runMain(m, NDArray.scalar(0L), y0, s);
        assertArrayEquals(new float[] {0, 1}, out(none, 0));
        assertArrayEquals(new int[] {0, 2}, ((TensorValue) ((TupleValue) none).fields().get(1)).data().shape());
    }

    /** A loop-carried value that grows each iteration is typed with ? in the growing dim. */
    @Test
    void loopCarriedShapeThatChangesBecomesAny() {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("i", I64))
                .addInput(tensor("c", B))
                .addInput(tensor("acc", F, 1))
                .addNode(node("Concat", "cat", List.of("acc", "acc"), List.of("acc_out"), integer("axis", 0)))
                .addNode(node("Identity", "id", List.of("c"), List.of("c_out")))
                .addOutput(tensor("c_out", B))
                .addOutput(tensor("acc_out", F, "k"));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("x", F, 1))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(3L), "three"))
                .addNode(node("Loop", "loop", List.of("three", "", "x"), List.of("y"), graph("body", body)))
                .addOutput(tensor("y", F, "k"));
        IRModule m = load(model(13, g));
        Type ret = TypeInference.infer(m).typeOf(new dev.relayfarm.ir.GlobalVar("main")).retType();
        assertEquals("Tensor[(?), float32]", ret.toString());
        assertEquals(8, out(Interpreter.runMain(m, floats(new int[] {1}, 1.5)), 0).length);
    }

    /** Scan over axis 1 of x backwards, stacking the running sum along output axis 1. */
    @Test
    void scanReverseWithAxes() {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("sum_in", F, 2))
                .addInput(tensor("col", F, 2))
                .addNode(node("Add", "add", List.of("sum_in", "col"), List.of("sum_out")))
                .addNode(node("Identity", "id", List.of("sum_out"), List.of("scan_out")))
                .addOutput(tensor("sum_out", F, 2))
                .addOutput(tensor("scan_out", F, 2));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("init", F, 2))
                .addInput(tensor("x", F, 2, 3))
                .addNode(node("Scan", "scan", List.of("init", "x"), List.of("total", "partial"), graph("body", body),
                        integer("num_scan_inputs", 1), OnnxImporterTest.ints("scan_input_axes", 1),
                        OnnxImporterTest.ints("scan_input_directions", 1), OnnxImporterTest.ints("scan_output_axes", -1)))
                .addOutput(tensor("total", F, 2))
                .addOutput(tensor("partial", F, 2, 3));
        IRModule m = load(model(11, g));
        Value v = Interpreter.runMain(m, floats(new int[] {2}, 0, 100), floats(new int[] {2, 3}, 1, 2, 3, 4, 5, 6));
        assertArrayEquals(new float[] {6, 115}, out(v, 0));
        // columns visited 3, 2, 1: running sums (3, 5, 6) and (106, 111, 115), stacked along axis 1
        assertArrayEquals(new float[] {3, 5, 6, 106, 111, 115}, out(v, 1));
    }

    /** A model-local function, called twice with different attribute bindings and a default. */
    @Test
    void modelLocalFunctionsExpandAtCallSites() {
        FunctionProto f = FunctionProto.newBuilder().setName("ScaledLeaky").setDomain("custom")
                .addInput("a").addOutput("b")
                .addAttribute("slope")
                .addAttributeProto(real("gain", 3f))
                .addNode(node("LeakyRelu", "leaky", List.of("a"), List.of("l"),
                        AttributeProto.newBuilder().setName("alpha").setType(AttributeProto.AttributeType.FLOAT).setRefAttrName("slope").build()))
                .addNode(node("Constant", "k", List.of(), List.of("g"),
                        AttributeProto.newBuilder().setName("value_float").setType(AttributeProto.AttributeType.FLOAT).setRefAttrName("gain").build()))
                .addNode(node("Mul", "mul", List.of("l", "g"), List.of("b")))
                .addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(13))
                .build();
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("x", F, 2))
                .addNode(node("ScaledLeaky", "call1", List.of("x"), List.of("y1"), real("slope", 0.5f)).toBuilder().setDomain("custom").build())
                .addNode(node("ScaledLeaky", "call2", List.of("y1"), List.of("y2"), real("slope", 0.25f), real("gain", 1f)).toBuilder().setDomain("custom").build())
                .addOutput(tensor("y2", F, 2));
        ModelProto m = model(13, g).toBuilder().addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("custom").setVersion(1)).addFunctions(f).build();
        IRModule module = load(m);
        // x = (-4, 2): call1 -> (-2*3, 2*3) = (-6, 6); call2 (gain 1) -> (-1.5, 6)
        assertArrayEquals(new float[] {-1.5f, 6}, out(Interpreter.runMain(module, floats(new int[] {2}, -4, 2)), 0));
    }

    @Test
    void loopBodyWithTheWrongArityIsAnErrorNamingTheNode() {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body").addInput(tensor("i", I64)).addOutput(tensor("i", I64));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("M", I64))
                .addNode(node("Loop", "badloop", List.of("M"), List.of(), graph("body", body)))
                .addOutput(tensor("M", I64));
        OnnxFormatException e = assertThrows(OnnxFormatException.class,
                () -> OnnxImporter.importModel(model(13, g), "cf.onnx", null, ImportOptions.DEFAULT));
        assertTrue(e.getMessage().contains("cf.onnx: node 'badloop' (Loop, opset 13)"), e.getMessage());
        assertTrue(e.getMessage().contains("the body has 1 inputs"), e.getMessage());
    }

    /**
     * ONNX lets If branches return tensors of different shapes: y = If(c) { x[0:2] } else { concat(x, x) } of x: [3]
     * types as the join, Tensor[(?), float32], in the importer and in full type inference, and runs either way.
     */
    @Test
    void ifBranchesOfDifferentShapesJoinToAny() {
        GraphProto.Builder then = GraphProto.newBuilder().setName("then")
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {0}), "zero"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {2}), "two"))
                .addNode(node("Slice", "head", List.of("x", "zero", "two"), List.of("t")))
                .addOutput(tensor("t", F, 2));
        GraphProto.Builder els = GraphProto.newBuilder().setName("else")
                .addNode(node("Concat", "twice", List.of("x", "x"), List.of("e"), integer("axis", 0)))
                .addOutput(tensor("e", F, 6));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("c", B))
                .addInput(tensor("x", F, 3))
                .addNode(node("If", "if", List.of("c"), List.of("y"), graph("then_branch", then), graph("else_branch", els)))
                .addOutput(tensor("y", F, "n"));
        IRModule m = load(model(13, g));
        InferResult r = TypeInference.infer(m);
        assertEquals("fn (bool, Tensor[(3), float32]) -> Tensor[(?), float32]",
                dev.relayfarm.text.RelayPrinter.print(r.typeOf(new dev.relayfarm.ir.GlobalVar("main"))));
        NDArray x = floats(new int[] {3}, 1, 2, 3);
        assertArrayEquals(new float[] {1, 2}, out(Interpreter.runMain(m, NDArray.scalar(true), x), 0));
        assertArrayEquals(new float[] {1, 2, 3, 1, 2, 3}, out(Interpreter.runMain(m, NDArray.scalar(false), x), 0));
    }
}
