package dev.relayfarm.passes;

import static dev.relayfarm.passes.MetaText.f32;
import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class FoldConstantTest {
    private static final String PASS = "fold-constant";

    private static String m(String body, NDArray... constants) {
        return body + MetaText.of(constants);
    }

    @Test
    void foldsScalarArithmeticNextToAVariable() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  add(%x, multiply(2f, subtract(5f, 2f)))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) { add(%x, 6f) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void foldsTensorConstantsThroughSeveralOps() {
        NDArray a = f32(new int[] {2, 2}, 1, 2, 3, 4);
        NDArray b = f32(new int[] {2}, 10, 20);
        String before = m("""
                def @main(%x: Tensor[(4), float32]) {
                  %0 = add(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = reshape(%0, newshape=[4]);
                  multiply(%x, %1)
                }
                """, a, b);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(4), float32]) { multiply(%x, meta[relay.Constant][0]) }
                """, f32(new int[] {4}, 11, 22, 13, 24)));
        assertSameResults(PASS, before);
    }

    @Test
    void inlinesLetBoundConstantsAndDropsTheBindings() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = add(1f, 2f);
                  let %b = (%a, 4f);
                  let %y = add(%x, %b.1);
                  multiply(%y, %a)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %y = add(%x, 4f);
                  multiply(%y, 3f)
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void foldsATupleResultAndItsProjection() {
        NDArray a = f32(new int[] {4}, 1, 2, 3, 4);
        String before = m("""
                def @main(%x: Tensor[(2), float32]) {
                  %0 = split(meta[relay.Constant][0], indices_or_sections=2);
                  add(%x, %0.1)
                }
                """, a);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }
                """, f32(new int[] {2}, 3, 4)));
        assertSameResults(PASS, before);
    }

    @Test
    void projectsATupleLiteralWhenTheDroppedFieldsArePure() {
        assertRewrites(PASS, """
                def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
                  %0 = (%x, exp(%y));
                  %0.0
                }
                """, """
                def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) { %x }
                """);
        // Dropping the ref_write would lose an effect.
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2), float32], %r: ref(Tensor[(2), float32])) {
                  %0 = (%x, ref_write(%r, %x));
                  %0.0
                }
                """);
    }

    @Test
    void shapeOfAStaticShapeFoldsEvenWhenTheTensorIsNotConstant() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = shape_of(%x);
                  %1 = shape_of(exp(%x), dtype="int64");
                  (%0, %1)
                }
                """;
        NDArray s32 = NDArray.fromLongs(DType.INT32, new int[] {2}, new long[] {2, 3});
        NDArray s64 = NDArray.fromLongs(DType.INT64, new int[] {2}, new long[] {2, 3});
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(2, 3), float32]) { (meta[relay.Constant][0], meta[relay.Constant][1]) }
                """, s32, s64));
        assertSameResults(PASS, before);
    }

    @Test
    void shapeOfADynamicShapeOrOfAnEffectStays() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(?, 3), float32]) { shape_of(%x) }
                """);
        // Folding would drop the call of @f, which may have effects.
        assertUnchanged(PASS, """
                def @f(%a: Tensor[(2), float32]) { %a }
                def @main(%x: Tensor[(2), float32], %r: ref(Tensor[(2), float32])) {
                  (shape_of(ref_read(%r)), shape_of(@f(%x)))
                }
                """);
    }

    @Test
    void constantConditionPicksItsBranch() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  if (less(1f, 2f)) { exp(%x) } else { negative(%x) }
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) { exp(%x) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void effectsAreNeverFolded() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(1f);
                  let %u = ref_write(%r, add(ref_read(%r), 1f));
                  add(%x, ref_read(%r))
                }
                """);
    }

    @Test
    void folding_insideAnEffectfulProgramKeepsTheEffectsInOrder() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(multiply(2f, 3f));
                  let %u = ref_write(%r, add(ref_read(%r), add(1f, 1f)));
                  add(%x, ref_read(%r))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(6f);
                  let %u = ref_write(%r, add(ref_read(%r), 2f));
                  add(%x, ref_read(%r))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void nonConstantCodeAndFunctionCallsStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2), float32]) { add(exp(%x), 1f) }
                """);
        // Only operator calls are evaluated; calls of functions are not, even with constant arguments.
        assertUnchanged(PASS, """
                def @g(%a: float32) { add(%a, 1f) }
                def @main(%x: Tensor[(2), float32]) {
                  %0 = fn (%b: float32) { multiply(%b, %b) };
                  add(%x, add(@g(2f), %0(3f)))
                }
                """);
    }

    @Test
    void tooLargeResultsAreNotMaterializedButTheirSmallConsumersFold() {
        // 1025 * 1024 elements: just above the default cap of 1 << 20.
        String big = """
                def @main(%x: Tensor[(1025, 1024), float32]) {
                  add(%x, ones(shape=[1025, 1024]))
                }
                """;
        assertUnchanged(PASS, big);
        String before = """
                def @main(%x: float32) {
                  %0 = ones(shape=[1025, 1024]);
                  add(%x, sum(multiply(%0, 2f)))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: float32) { add(%x, 2099200f) }
                """);
    }

    @Test
    void sizeCapsAreOptions() {
        String text = """
                def @main(%x: Tensor[(8), float32]) {
                  add(%x, zeros(shape=[8]))
                }
                """;
        IRModule in = TypeInference.infer(RelayParser.parseModule(text, "t")).module();
        PassContext ctx = new PassContext(PassOptions.level(2));
        Sequential small = new Sequential("t", List.of(new FoldConstant(new FoldConstant.Options(4, 4))));
        assertFalse(small.run(in, ctx).changed());
        Sequential large = new Sequential("t", List.of(new FoldConstant(new FoldConstant.Options(8, 8))));
        Expr body = large.run(in, new PassContext(PassOptions.level(2))).module().main().orElseThrow().body();
        assertInstanceOf(Constant.class, ((Call) body).args().get(1));
        // A consumer may not fold when evaluating its large input needs more than maxEvalElements.
        String sum = """
                def @main(%x: float32) { add(%x, sum(zeros(shape=[8]))) }
                """;
        IRModule s = TypeInference.infer(RelayParser.parseModule(sum, "t")).module();
        assertFalse(new Sequential("t", List.of(new FoldConstant(new FoldConstant.Options(4, 6)))).run(s, new PassContext(PassOptions.level(2))).changed());
        assertTrue(new Sequential("t", List.of(new FoldConstant(new FoldConstant.Options(4, 9)))).run(s, new PassContext(PassOptions.level(2))).changed());
        assertThrows(IllegalArgumentException.class, () -> new FoldConstant.Options(8, 4));
    }

    @Test
    void aTransformOfALargeConstantFoldsButAGrowingCallDoesNot() {
        // Cap 2: the 8-element transpose is no larger than the constant it reads, so it replaces it (a weight
        // layout change); broadcasting a 2-element constant to 8 elements would grow the program and stays.
        String text = """
                def @main(%x: Tensor[(4, 2), float32], %y: Tensor[(4, 2), float32]) {
                  add(add(%x, transpose(meta[relay.Constant][0], axes=[1, 0])), add(%y, broadcast_to(meta[relay.Constant][1], shape=[4, 2])))
                }
                #[metadata]
                {"relay.Constant": [{"dtype": "float32", "shape": [2, 4], "data": "A_DATA"}, {"dtype": "float32", "shape": [2], "data": "B_DATA"}]}
                """.replace("A_DATA", "AAAAAAAAgD8AAABAAABAQAAAgEAAAKBAAADAQAAA4EA=").replace("B_DATA", "AACAPwAAAEA=");
        IRModule in = TypeInference.infer(RelayParser.parseModule(text, "t")).module();
        Expr body = new Sequential("t", List.of(new FoldConstant(new FoldConstant.Options(2, 64)))).run(in, new PassContext(PassOptions.level(2)))
                .module().main().orElseThrow().body();
        Call left = (Call) ((Call) body).args().get(0);
        Call right = (Call) ((Call) body).args().get(1);
        Constant transposed = assertInstanceOf(Constant.class, left.args().get(1));
        assertArrayEquals(new float[] {0, 4, 1, 5, 2, 6, 3, 7}, transposed.data().floatData());
        assertInstanceOf(Call.class, right.args().get(1), "broadcast_to 8 elements from a 2-element constant stays");
    }

    @Test
    void aFailingEvaluationIsLeftForRunTime() {
        // Index 7 of a 3-element tensor with mode=fast is an error the interpreter raises.
        NDArray a = f32(new int[] {3}, 1, 2, 3);
        assertUnchanged(PASS, m("""
                def @main(%x: float32) { add(%x, take(meta[relay.Constant][0], 7, mode="fast")) }
                """, a));
    }

    @Test
    void anArgwhereOfAConstantFoldsToItsStaticResult() {
        NDArray a = f32(new int[] {4}, 0, 1, 0, 2);
        String before = m("""
                def @main(%x: int32) { add(%x, argwhere(meta[relay.Constant][0])) }
                """, a);
        IRModule out = PassAssert.run(PASS, before).module();
        Constant c = (Constant) ((Call) out.main().orElseThrow().body()).args().get(1);
        assertEquals(TensorType.of(DType.INT32, 2, 1), c.type());
        assertSameResults(PASS, before);
    }

    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
            // One shared constant call: 100k adds use it, it folds once.
            Call two = Call.op("multiply", scalar(1), scalar(2));
            IRModule in = LongChains.chain(lets, x, e -> Call.op("add", e, two), e -> e);
            PassResult r = LongChains.run(new FoldConstant(), in);
            assertTrue(r.changed());
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                assertFalse(e instanceof Call c && c.callee() instanceof Op op && op.name().equals("multiply"), "lets=" + lets);
            }
        }
        // A 100k-let chain of constants folds to one constant.
        Var x = Var.fresh("x", TensorType.scalar(DType.FLOAT32));
        Constant one = scalar(1);
        IRModule in = LongChains.chain(true, x, e -> Call.op("add", e == x ? scalar(0) : e, one), e -> Call.op("add", x, e));
        Expr body = LongChains.run(new FoldConstant(), in).module().main().orElseThrow().body();
        Constant c = (Constant) ((Call) body).args().get(1);
        assertEquals(LongChains.LENGTH, c.data().getDouble(0));
    }

    private static Constant scalar(double v) {
        return new Constant(NDArray.scalar((float) v));
    }
}
