package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.OptionalProto;
import dev.relayfarm.frontend.proto.Onnx.SequenceProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sequences and optionals as static-length tuples ({@link SequenceConverters}): each operator on small
 * hand-checked cases, sequence/optional graph inputs bound by {@link ValueLayout}, loops carrying a
 * sequence unrolled, an If with a known condition converting only its branch, and the errors.
 */
class SequenceConvertersTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;

    private static TypeProto tensorType(int elem) {
        return TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(elem)).build();
    }

    private static TypeProto seqType(TypeProto elem) {
        return TypeProto.newBuilder().setSequenceType(TypeProto.Sequence.newBuilder().setElemType(elem)).build();
    }

    private static TypeProto optType(TypeProto elem) {
        return TypeProto.newBuilder().setOptionalType(TypeProto.Optional.newBuilder().setElemType(elem)).build();
    }

    private static ValueInfoProto value(String name, TypeProto t) {
        return ValueInfoProto.newBuilder().setName(name).setType(t).build();
    }

    private static AttributeProto integer(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    private static NDArray f32(int[] shape, double... v) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, v);
    }

    private static TensorProto i64(String name, long v) {
        return OnnxTensors.fromNDArray(NDArray.scalar(v), name);
    }

    private static IRModule load(ModelProto m, ImportOptions options) {
        IRModule module = OnnxImporter.importModel(m, "seq.onnx", null, options);
        TypeInference.infer(module); // the whole program type-checks
        return module;
    }

    private static Value run(ModelProto m, ImportOptions options, NDArray... args) {
        return Interpreter.runMain(load(m, options), args);
    }

    private static float[] floats(Value v) {
        return ((TensorValue) v).data().floatData();
    }

    /** a[2], b[3], c[1] as a sequence "s". */
    private static GraphProto.Builder abc() {
        return GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 2)).addInput(tensor("b", F, 3)).addInput(tensor("c", F, 1))
                .addNode(node("SequenceConstruct", "construct", List.of("a", "b", "c"), List.of("s")));
    }

    private static final NDArray A = f32(new int[] {2}, 1, 2);
    private static final NDArray B = f32(new int[] {3}, 3, 4, 5);
    private static final NDArray C = f32(new int[] {1}, 6);

    @Test
    void sequenceAtTakesTheElementAtAKnownPositionNegativeCountingFromTheEnd() {
        for (long pos : new long[] {1, -2}) {
            GraphProto.Builder g = abc().addInitializer(i64("p", pos))
                    .addNode(node("SequenceAt", "at", List.of("s", "p"), List.of("y"))).addOutput(tensor("y", F));
            assertArrayEquals(new float[] {3, 4, 5}, floats(run(model(11, g), ImportOptions.DEFAULT, A, B, C)));
        }
    }

    @Test
    void sequenceAtOutOfRangeNamesTheNodeAndTheRange() {
        GraphProto.Builder g = abc().addInitializer(i64("p", 3))
                .addNode(node("SequenceAt", "at3", List.of("s", "p"), List.of("y"))).addOutput(tensor("y", F));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> load(model(11, g), ImportOptions.DEFAULT));
        assertTrue(e.getMessage().contains("node 'at3' (SequenceAt"), e.getMessage());
        assertTrue(e.getMessage().contains("position 3 is out of range for a sequence of 3 tensors (allowed -3..2)"), e.getMessage());
    }

    @Test
    void sequenceAtWithAComputedPositionAsksForItToBeConstant() {
        GraphProto.Builder g = abc().addInput(tensor("p", I64))
                .addNode(node("SequenceAt", "at", List.of("s", "p"), List.of("y"))).addOutput(tensor("y", F));
        NeedsConstantException e = assertThrows(NeedsConstantException.class, () -> load(model(11, g), ImportOptions.DEFAULT));
        assertEquals("p", e.value());
    }

    @Test
    void insertEraseAndLengthBuildNewTuples() {
        // insert c at the front of (a, b), then erase the last: (c, a); length 2
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 2)).addInput(tensor("b", F, 3)).addInput(tensor("c", F, 1))
                .addInitializer(i64("zero", 0))
                .addNode(node("SequenceConstruct", "construct", List.of("a", "b"), List.of("s")))
                .addNode(node("SequenceInsert", "insert", List.of("s", "c", "zero"), List.of("s2")))
                .addNode(node("SequenceErase", "erase", List.of("s2"), List.of("s3")))
                .addNode(node("SequenceLength", "len", List.of("s3"), List.of("n")))
                .addOutput(value("s3", seqType(tensorType(F)))).addOutput(tensor("n", I64));
        TupleValue out = (TupleValue) run(model(11, g), ImportOptions.DEFAULT, A, B, C);
        TupleValue s3 = (TupleValue) out.fields().get(0);
        assertEquals(2, s3.fields().size());
        assertArrayEquals(new float[] {6}, floats(s3.fields().get(0)));
        assertArrayEquals(new float[] {1, 2}, floats(s3.fields().get(1)));
        assertEquals(2L, ((TensorValue) out.fields().get(1)).data().getLong(0));
    }

    @Test
    void insertRejectsAnotherElementType() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 2)).addInput(tensor("i", I64, 1))
                .addNode(node("SequenceConstruct", "construct", List.of("a"), List.of("s")))
                .addNode(node("SequenceInsert", "insert", List.of("s", "i"), List.of("s2")))
                .addOutput(value("s2", seqType(tensorType(F))));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> load(model(11, g), ImportOptions.DEFAULT));
        assertTrue(e.getMessage().contains("has element type int64 but the sequence holds float32"), e.getMessage());
    }

    @Test
    void concatFromSequenceConcatenatesOrStacks() {
        // [[1,2]] and [[3,4],[5,6]] along axis 0: [[1,2],[3,4],[5,6]]
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 1, 2)).addInput(tensor("b", F, 2, 2))
                .addNode(node("SequenceConstruct", "construct", List.of("a", "b"), List.of("s")))
                .addNode(node("ConcatFromSequence", "cat", List.of("s"), List.of("y"), integer("axis", 0)))
                .addOutput(tensor("y", F));
        NDArray y = ((TensorValue) run(model(11, g), ImportOptions.DEFAULT, f32(new int[] {1, 2}, 1, 2), f32(new int[] {2, 2}, 3, 4, 5, 6))).data();
        assertArrayEquals(new int[] {3, 2}, y.shape());
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, y.floatData());
        // [1,2] and [3,4] stacked on a new last axis (-1 counts in the output's rank 2): [[1,3],[2,4]]
        GraphProto.Builder h = GraphProto.newBuilder().setName("h")
                .addInput(tensor("a", F, 2)).addInput(tensor("b", F, 2))
                .addNode(node("SequenceConstruct", "construct", List.of("a", "b"), List.of("s")))
                .addNode(node("ConcatFromSequence", "stack", List.of("s"), List.of("y"), integer("axis", -1), integer("new_axis", 1)))
                .addOutput(tensor("y", F));
        NDArray z = ((TensorValue) run(model(11, h), ImportOptions.DEFAULT, f32(new int[] {2}, 1, 2), f32(new int[] {2}, 3, 4))).data();
        assertArrayEquals(new int[] {2, 2}, z.shape());
        assertArrayEquals(new float[] {1, 3, 2, 4}, z.floatData());
    }

    @Test
    void concatFromAnEmptySequenceIsAnError() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addNode(node("SequenceEmpty", "empty", List.of(), List.of("s")))
                .addNode(node("ConcatFromSequence", "cat", List.of("s"), List.of("y"), integer("axis", 0)))
                .addOutput(tensor("y", F));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> load(model(11, g), ImportOptions.DEFAULT));
        assertTrue(e.getMessage().contains("node 'cat'") && e.getMessage().contains("the sequence is empty"), e.getMessage());
    }

    @Test
    void splitToSequenceByChunkSizeAndIntoSqueezedSlices() {
        // [0..4] in chunks of 2: [0,1], [2,3], [4]
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("x", F, 5)).addInitializer(i64("two", 2))
                .addNode(node("SplitToSequence", "split", List.of("x", "two"), List.of("s")))
                .addOutput(value("s", seqType(tensorType(F))));
        TupleValue s = (TupleValue) run(model(11, g), ImportOptions.DEFAULT, f32(new int[] {5}, 0, 1, 2, 3, 4));
        assertEquals(3, s.fields().size());
        assertArrayEquals(new float[] {2, 3}, floats(s.fields().get(1)));
        assertArrayEquals(new float[] {4}, floats(s.fields().get(2)));
        // [[1,2,3],[4,5,6]] along axis 1 without split, keepdims=0: three [2] columns
        GraphProto.Builder h = GraphProto.newBuilder().setName("h")
                .addInput(tensor("x", F, 2, 3))
                .addNode(node("SplitToSequence", "split", List.of("x"), List.of("s"), integer("axis", 1), integer("keepdims", 0)))
                .addOutput(value("s", seqType(tensorType(F))));
        TupleValue cols = (TupleValue) run(model(11, h), ImportOptions.DEFAULT, f32(new int[] {2, 3}, 1, 2, 3, 4, 5, 6));
        assertEquals(3, cols.fields().size());
        assertArrayEquals(new int[] {2}, ((TensorValue) cols.fields().get(2)).data().shape());
        assertArrayEquals(new float[] {3, 6}, floats(cols.fields().get(2)));
    }

    @Test
    void splitSizesMustAddUpToTheDim() {
        NDArray sizes = NDArray.fromLongs(DType.INT64, new int[] {2}, new long[] {2, 2});
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("x", F, 5)).addInitializer(OnnxTensors.fromNDArray(sizes, "sizes"))
                .addNode(node("SplitToSequence", "split", List.of("x", "sizes"), List.of("s")))
                .addOutput(value("s", seqType(tensorType(F))));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> load(model(11, g), ImportOptions.DEFAULT));
        assertTrue(e.getMessage().contains("split sizes add up to 4 but dim 0 is 5"), e.getMessage());
    }

    /** A model whose input "s" is a sequence of float tensors of rank 1; output: its length and element 1 + t. */
    private static ModelProto sequenceInputModel() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(value("s", seqType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(F)
                        .setShape(dev.relayfarm.frontend.proto.Onnx.TensorShapeProto.newBuilder()
                                .addDim(dev.relayfarm.frontend.proto.Onnx.TensorShapeProto.Dimension.newBuilder().setDimParam("N")))).build())))
                .addInput(tensor("t", F, 1))
                .addInitializer(i64("one", 1))
                .addNode(node("SequenceLength", "len", List.of("s"), List.of("n")))
                .addNode(node("SequenceAt", "at", List.of("s", "one"), List.of("e")))
                .addNode(node("Add", "add", List.of("e", "t"), List.of("y")))
                .addOutput(tensor("n", I64)).addOutput(tensor("y", F));
        return model(11, g);
    }

    @Test
    void aSequenceGraphInputIsOneParameterPerElementByItsLayout() {
        ValueLayout layout = new ValueLayout.Sequence(List.of(new ValueLayout.Tensor(List.of(2L)), new ValueLayout.Tensor(List.of(3L))));
        assertEquals(2, layout.tensorCount());
        ImportOptions options = ImportOptions.DEFAULT.withValueLayouts(Map.of("s", layout));
        IRModule m = load(sequenceInputModel(), options);
        assertEquals(3, m.main().orElseThrow().params().size(), "s_0, s_1 and t");
        TupleValue out = (TupleValue) Interpreter.runMain(m, A, B, C);
        assertEquals(2L, ((TensorValue) out.fields().get(0)).data().getLong(0));
        assertArrayEquals(new float[] {9, 10, 11}, floats(out.fields().get(1)));
    }

    @Test
    void aSequenceGraphInputWithoutLayoutOrWithOneThatDoesNotFitIsAnError() {
        OnnxFormatException none = assertThrows(OnnxFormatException.class, () -> load(sequenceInputModel(), ImportOptions.DEFAULT));
        assertTrue(none.getMessage().contains("graph input 's' is a sequence; its length and element shapes must be given"), none.getMessage());
        ImportOptions rank2 = ImportOptions.DEFAULT.withValueLayouts(Map.of("s", new ValueLayout.Sequence(List.of(new ValueLayout.Tensor(List.of(2L, 2L))))));
        OnnxFormatException bad = assertThrows(OnnxFormatException.class, () -> load(sequenceInputModel(), rank2));
        assertTrue(bad.getMessage().contains("does not fit its declared shape"), bad.getMessage());
        ImportOptions optional = ImportOptions.DEFAULT.withValueLayouts(Map.of("s", new ValueLayout.Optional(null)));
        OnnxFormatException kind = assertThrows(OnnxFormatException.class, () -> load(sequenceInputModel(), optional));
        assertTrue(kind.getMessage().contains("is an optional but it is declared SEQUENCE_TYPE"), kind.getMessage());
    }

    /** Input "o": optional of float tensor; outputs: whether it has an element, and (when asked) the element. */
    private static ModelProto optionalInputModel(boolean get) {
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(value("o", optType(tensorType(F))))
                .addNode(node("OptionalHasElement", "has", List.of("o"), List.of("h")))
                .addOutput(tensor("h", TensorProto.DataType.BOOL_VALUE));
        if (get) g.addNode(node("OptionalGetElement", "get", List.of("o"), List.of("y"))).addOutput(tensor("y", F));
        return model(18, g);
    }

    @Test
    void optionalInputsAreKnownToBeEmptyOrPresentAtImport() {
        ImportOptions present = ImportOptions.DEFAULT.withValueLayouts(Map.of("o", new ValueLayout.Optional(new ValueLayout.Tensor(List.of(2L)))));
        TupleValue out = (TupleValue) run(optionalInputModel(true), present, A);
        assertTrue(((TensorValue) out.fields().get(0)).data().getBoolean(0));
        assertArrayEquals(new float[] {1, 2}, floats(out.fields().get(1)));
        ImportOptions empty = ImportOptions.DEFAULT.withValueLayouts(Map.of("o", new ValueLayout.Optional(null)));
        IRModule m = load(optionalInputModel(false), empty);
        assertEquals(0, m.main().orElseThrow().params().size());
        assertFalse(((TensorValue) Interpreter.runMain(m)).data().getBoolean(0));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> load(optionalInputModel(true), empty));
        assertTrue(e.getMessage().contains("node 'get' (OptionalGetElement") && e.getMessage().contains("the optional input is empty"), e.getMessage());
    }

    @Test
    void theElementOfAnOptionalSequenceIsASequenceEvenWhenEmpty() {
        // o holds an empty sequence: its element is (), which OptionalHasElement must take for a sequence (true), not an empty optional
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(value("o", optType(seqType(tensorType(F)))))
                .addNode(node("OptionalGetElement", "get", List.of("o"), List.of("s")))
                .addNode(node("OptionalHasElement", "has", List.of("s"), List.of("h")))
                .addOutput(tensor("h", TensorProto.DataType.BOOL_VALUE));
        ImportOptions layout = ImportOptions.DEFAULT.withValueLayouts(Map.of("o", new ValueLayout.Optional(new ValueLayout.Sequence(List.of()))));
        assertTrue(((TensorValue) run(model(18, g), layout)).data().getBoolean(0));
    }

    @Test
    void optionalWrapsAValueAndAnEmptyOneIsTheEmptyTuple() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 2))
                .addNode(node("Optional", "some", List.of("a"), List.of("o")))
                .addNode(node("Optional", "none", List.of(), List.of("e"),
                        AttributeProto.newBuilder().setName("type").setType(AttributeProto.AttributeType.TYPE_PROTO).setTp(tensorType(F)).build()))
                .addNode(node("OptionalHasElement", "has_o", List.of("o"), List.of("ho")))
                .addNode(node("OptionalHasElement", "has_e", List.of("e"), List.of("he")))
                .addOutput(value("o", optType(tensorType(F)))).addOutput(value("e", optType(tensorType(F))))
                .addOutput(tensor("ho", TensorProto.DataType.BOOL_VALUE)).addOutput(tensor("he", TensorProto.DataType.BOOL_VALUE));
        TupleValue out = (TupleValue) run(model(18, g), ImportOptions.DEFAULT, A);
        assertEquals(1, ((TupleValue) out.fields().get(0)).fields().size());
        assertEquals(0, ((TupleValue) out.fields().get(1)).fields().size());
        assertTrue(((TensorValue) out.fields().get(2)).data().getBoolean(0));
        assertFalse(((TensorValue) out.fields().get(3)).data().getBoolean(0));
    }

    /** Loop(M, cond, s0) whose body appends x to the carried sequence. */
    private static ModelProto appendLoop(boolean tripCountIsInput) {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("i", I64)).addInput(tensor("c", TensorProto.DataType.BOOL_VALUE)).addInput(value("s_in", seqType(tensorType(F))))
                .addNode(node("Identity", "keep", List.of("c"), List.of("c_out")))
                .addNode(node("SequenceInsert", "append", List.of("s_in", "x"), List.of("s_out")))
                .addOutput(tensor("c_out", TensorProto.DataType.BOOL_VALUE)).addOutput(value("s_out", seqType(tensorType(F))));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g").addInput(tensor("x", F, 2));
        if (tripCountIsInput) g.addInput(tensor("m", I64));
        else g.addInitializer(i64("m", 3));
        g.addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(true), "go"))
                .addNode(node("SequenceEmpty", "empty", List.of(), List.of("s0")))
                .addNode(node("Loop", "loop", List.of("m", "go", "s0"), List.of("s"),
                        AttributeProto.newBuilder().setName("body").setType(AttributeProto.AttributeType.GRAPH).setG(body).build()))
                .addOutput(value("s", seqType(tensorType(F))));
        return model(13, g);
    }

    @Test
    void aLoopCarryingASequenceIsUnrolled() {
        TupleValue s = (TupleValue) run(appendLoop(false), ImportOptions.DEFAULT, A);
        assertEquals(3, s.fields().size());
        for (Value e : s.fields()) assertArrayEquals(new float[] {1, 2}, floats(e));
    }

    @Test
    void anUnrolledLoopNeedsItsTripCountAtImport() {
        NeedsConstantException e = assertThrows(NeedsConstantException.class, () -> load(appendLoop(true), ImportOptions.DEFAULT));
        assertEquals("m", e.value());
        assertTrue(e.getMessage().contains("unrolled at import time"), e.getMessage());
    }

    @Test
    void anIfWithAKnownConditionConvertsOnlyTheBranchTaken() {
        // else takes the element of an empty optional, which would be an error; the condition is true
        GraphProto.Builder then = GraphProto.newBuilder().setName("then").addNode(node("Identity", "t", List.of("a"), List.of("y_then"))).addOutput(tensor("y_then", F));
        GraphProto.Builder other = GraphProto.newBuilder().setName("else")
                .addNode(node("Optional", "none", List.of(), List.of("e"),
                        AttributeProto.newBuilder().setName("type").setType(AttributeProto.AttributeType.TYPE_PROTO).setTp(tensorType(F)).build()))
                .addNode(node("OptionalGetElement", "get", List.of("e"), List.of("y_else"))).addOutput(tensor("y_else", F));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g").addInput(tensor("a", F, 2))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(true), "yes"))
                .addNode(node("If", "if", List.of("yes"), List.of("y"),
                        AttributeProto.newBuilder().setName("then_branch").setType(AttributeProto.AttributeType.GRAPH).setG(then).build(),
                        AttributeProto.newBuilder().setName("else_branch").setType(AttributeProto.AttributeType.GRAPH).setG(other).build()))
                .addOutput(tensor("y", F));
        assertArrayEquals(new float[] {1, 2}, floats(run(model(18, g), ImportOptions.DEFAULT, A)));
    }

    @Test
    void sequenceMapConvertsTheBodyPerElement() {
        // (a, b) each plus t
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("e", F, "N")).addInput(tensor("u", F, 1))
                .addNode(node("Add", "add", List.of("e", "u"), List.of("o"))).addOutput(tensor("o", F, "N"));
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("a", F, 2)).addInput(tensor("b", F, 3)).addInput(tensor("t", F, 1))
                .addNode(node("SequenceConstruct", "construct", List.of("a", "b"), List.of("s")))
                .addNode(node("SequenceMap", "map", List.of("s", "t"), List.of("r"),
                        AttributeProto.newBuilder().setName("body").setType(AttributeProto.AttributeType.GRAPH).setG(body).build()))
                .addOutput(value("r", seqType(tensorType(F))));
        TupleValue r = (TupleValue) run(model(17, g), ImportOptions.DEFAULT, A, B, C);
        assertArrayEquals(new float[] {7, 8}, floats(r.fields().get(0)));
        assertArrayEquals(new float[] {9, 10, 11}, floats(r.fields().get(1)));
    }

    @Test
    void dataFilesReadAsLayoutsAndFlattenedTensors() {
        SequenceProto seq = SequenceProto.newBuilder().setElemType(SequenceProto.DataType.TENSOR_VALUE)
                .addTensorValues(OnnxTensors.fromNDArray(A, "a")).addTensorValues(OnnxTensors.fromNDArray(B, "b")).build();
        OnnxValues.Read r = OnnxValues.read(OptionalProto.newBuilder().setElemType(OptionalProto.DataType.SEQUENCE_VALUE).setSequenceValue(seq).build(), null, "x");
        assertEquals(new ValueLayout.Optional(new ValueLayout.Sequence(List.of(new ValueLayout.Tensor(List.of(2L)), new ValueLayout.Tensor(List.of(3L))))),
                OnnxValues.layout(r));
        List<NDArray> flat = OnnxValues.flatten(r);
        assertEquals(2, flat.size());
        assertArrayEquals(new float[] {3, 4, 5}, flat.get(1).floatData());
        assertEquals(new ValueLayout.Optional(null), OnnxValues.layout(OnnxValues.read(OptionalProto.getDefaultInstance(), null, "x")));
        assertEquals(new ValueLayout.Sequence(List.of()), OnnxValues.layout(OnnxValues.read(SequenceProto.getDefaultInstance(), null, "x")));
    }
}
