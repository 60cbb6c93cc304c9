package dev.relayfarm.passes;

import static dev.relayfarm.passes.MetaText.f32;
import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.api.Test;

class SimplifyInferenceTest {
    private static final String PASS = "simplify-inference";
    private static final String PARAMS = "%g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]";

    @Test
    void batchNormBecomesScaleAndShiftExpressions() {
        assertRewrites(PASS, """
                def @main(%x: Tensor[(1, 2, 3, 3), float32], PARAMS) {
                  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
                  %0.0
                }
                """.replace("PARAMS", PARAMS), """
                def @main(%x: Tensor[(1, 2, 3, 3), float32], PARAMS) {
                  %0 = divide(%g, sqrt(add(%v, 1e-05f)));
                  %1 = multiply(%x, expand_dims(%0, axis=1, num_newaxis=2));
                  add(%1, expand_dims(subtract(%b, multiply(%m, %0)), axis=1, num_newaxis=2))
                }
                """.replace("PARAMS", PARAMS));
    }

    @Test
    void batchNormOnTheLastAxisWithoutScaleOrCenter() {
        assertRewrites(PASS, """
                def @main(%x: Tensor[(3, 2), float32], PARAMS) {
                  %0 = nn.batch_norm(%x, %g, %b, %m, %v, axis=-1, epsilon=0.5f, center=False, scale=False);
                  %0.0
                }
                """.replace("PARAMS", PARAMS), """
                def @main(%x: Tensor[(3, 2), float32], PARAMS) {
                  %0 = divide(1f, sqrt(add(%v, 0.5f)));
                  add(multiply(%x, %0), negative(multiply(%m, %0)))
                }
                """.replace("PARAMS", PARAMS));
    }

    @Test
    void batchNormKeepsItsResultsAndFoldsToOneMultiplyAdd() {
        NDArray g = f32(new int[] {2}, 0.5, 2);
        NDArray b = f32(new int[] {2}, 0.1, -0.3);
        NDArray mean = f32(new int[] {2}, 0.2, -1);
        NDArray var = f32(new int[] {2}, 0.7, 1.5);
        String before = """
                def @main(%x: Tensor[(2, 2, 3), float32]) {
                  %0 = nn.batch_norm(%x, meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2], meta[relay.Constant][3], epsilon=0.001f);
                  nn.relu(%0.0)
                }
                """ + MetaText.of(g, b, mean, var);
        assertSameResults(PASS, before);
        IRModule out = PassAssert.run(PASS + ",fold-constant", before).module();
        Call relu = (Call) out.main().orElseThrow().body();
        Call add = (Call) relu.args().getFirst();
        Call mul = (Call) add.args().get(0);
        assertInstanceOf(Constant.class, add.args().get(1));
        assertInstanceOf(Constant.class, mul.args().get(1));
        assertInstanceOf(Var.class, mul.args().get(0));
        assertSameResults(PASS + ",fold-constant", before);
    }

    @Test
    void dropoutIsRemoved() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = nn.dropout(%x, rate=0.3f);
                  exp(%0.0)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32]) { exp(%x) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void otherFieldsAndOtherOpsStay() {
        // The mask of a dropout and the statistics of a batch_norm are not the normalized data.
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 3, 3), float32], PARAMS) {
                  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
                  %1 = nn.dropout(%x);
                  (%0.1, %0.2, %1.1, nn.relu(%x))
                }
                """.replace("PARAMS", PARAMS));
    }

    @Test
    void layerNormIsExpanded() {
        String before = """
                def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32]) {
                  nn.layer_norm(%x, %g, %b)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32]) {
                  %0 = mean(%x, axis=[2], keepdims=True);
                  %1 = variance(%x, %0, axis=[2], keepdims=True);
                  %2 = divide(subtract(%x, %0), sqrt(add(%1, 1e-05f)));
                  add(multiply(%2, %g), %b)
                }
                """);
        assertSameResults(PASS, before);
        String middle = """
                def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32]) {
                  nn.layer_norm(%x, %g, %b, axis=1, center=False)
                }
                """;
        assertRewrites(PASS, middle, """
                def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32]) {
                  %0 = mean(%x, axis=[1], keepdims=True);
                  %1 = variance(%x, %0, axis=[1], keepdims=True);
                  %2 = divide(subtract(%x, %0), sqrt(add(%1, 1e-05f)));
                  multiply(%2, expand_dims(%g, axis=1, num_newaxis=1))
                }
                """);
        assertSameResults(PASS, middle);
    }

    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 2));
            IRModule in = LongChains.chain(lets, x, e -> new TupleGetItem(Call.op("nn.dropout", e), 0), e -> e);
            PassResult r = LongChains.run(new SimplifyInference(), in);
            assertTrue(r.changed());
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                assertFalse(e instanceof Call c && c.callee() instanceof Op op && op.name().equals("nn.dropout"), "lets=" + lets);
            }
        }
    }
}
