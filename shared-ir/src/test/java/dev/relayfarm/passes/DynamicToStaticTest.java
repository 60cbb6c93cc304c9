package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.api.Test;

class DynamicToStaticTest {
    private static final String PASS = "dynamic-to-static";

    @Test
    void likeOpsOfStaticTensorsBecomeStaticCreationOps() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(4), int64]) {
                  (add(%x, ones_like(%x)), zeros_like(exp(%x)), full_like(%i, 7i64))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(4), int64]) {
                  (add(%x, ones(shape=[2, 3], dtype="float32")), zeros(shape=[2, 3], dtype="float32"), full(7i64, shape=[4], dtype="int64"))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void reshapeLikeAndShapeOfUseTheStaticShape() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {
                  (reshape_like(%x, %y), shape_of(%y))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {
                  (reshape(%x, newshape=[3, 2]), meta[relay.Constant][0])
                }
                """ + MetaText.of(NDArray.fromLongs(DType.INT32, new int[] {2}, new long[] {3, 2})));
        assertSameResults(PASS, before);
    }

    @Test
    void dynamicShapesAndEffectsStay() {
        assertUnchanged(PASS, """
                def @f(%a: Tensor[(2), float32]) { %a }
                def @main(%x: Tensor[(?, 3), float32], %y: Tensor[(2), float32]) {
                  (ones_like(%x), shape_of(%x), reshape_like(%y, @f(%y)), zeros_like(@f(%y)), full_like(%x, 1f))
                }
                """);
    }

    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
            IRModule in = LongChains.chain(lets, x, e -> Call.op("add", e, Call.op("ones_like", e)), e -> e);
            PassResult r = LongChains.run(new DynamicToStatic(), in);
            assertTrue(r.changed());
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                assertFalse(e instanceof Call c && c.callee() instanceof Op op && op.name().equals("ones_like"), "lets=" + lets);
            }
        }
    }
}
