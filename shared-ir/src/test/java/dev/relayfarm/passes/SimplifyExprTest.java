package dev.relayfarm.passes;

import static dev.relayfarm.passes.MetaText.f32;
import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.api.Test;

class SimplifyExprTest {
    private static final String PASS = "simplify-expr";

    @Test
    void reshapeChainsBecomeOneReshape() {
        String before = """
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  %0 = reshape(%x, newshape=[6, 4]);
                  %1 = expand_dims(%0, axis=0);
                  %2 = reshape(%1, newshape=[0, -1]);
                  reshape(%2, newshape=[4, -1])
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3, 4), float32]) { reshape(%x, newshape=[4, 6]) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void reshapesToTheSameShapeDisappear() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = reshape(%x, newshape=[2, 3]);
                  %1 = squeeze(expand_dims(%0, axis=1), axis=[1]);
                  %2 = squeeze(%1);
                  exp(expand_dims(squeeze(expand_dims(%2, axis=2), axis=[2]), axis=0, num_newaxis=0))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32]) { exp(%x) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void reshapesThatChangeTheShapeOrHaveUnknownDimsStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(?, ?), float32]) {
                  (reshape(%x, newshape=[3, 2]), expand_dims(%x, axis=0), reshape(%y, newshape=[-3, -1]))
                }
                """);
    }

    @Test
    void transposesCompose() {
        String before = """
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  %0 = transpose(%x, axes=[1, 2, 0]);
                  %1 = transpose(%0, axes=[2, 0, 1]);
                  %2 = transpose(%1, axes=[0, 2, 1]);
                  %3 = transpose(%2);
                  (%1, %3, transpose(%x, axes=[0, 1, 2]), transpose(%x, axes=[-3, -2, -1]), transpose(%x, axes=[-3, -1, -2]))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  (%x, transpose(%x, axes=[1, 2, 0]), %x, %x, transpose(%x, axes=[-3, -1, -2]))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void neutralElementsDisappear() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(3), int32]) {
                  %0 = multiply(%x, 1f);
                  %1 = multiply(1f, %0);
                  %2 = add(%1, 0f);
                  %3 = add(0f, %2);
                  %4 = subtract(%3, 0f);
                  %5 = divide(%4, meta[relay.Constant][0]);
                  (%5, add(%i, 0), multiply(%i, ones(shape=[3], dtype="int32")))
                }
                """ + MetaText.of(f32(new int[] {1, 3}, 1, 1, 1));
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32], %i: Tensor[(3), int32]) {
                  (%x, %i, multiply(%i, ones(shape=[3], dtype="int32")))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void neutralElementsThatBroadcastOrAreNotNeutralStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(3), float32], %y: Tensor[(1), float32], %z: Tensor[(?), float32]) {
                  (multiply(%x, meta[relay.Constant][0]), add(%y, meta[relay.Constant][1]), multiply(%z, meta[relay.Constant][1]),
                   subtract(0f, %x), divide(1f, %x), multiply(%x, 2f), add(%x, meta[relay.Constant][2]))
                }
                """ + MetaText.of(f32(new int[] {2, 3}, 1, 1, 1, 1, 1, 1), f32(new int[] {3}, 0, 0, 0), f32(new int[] {3}, 0, 1, 0)));
    }

    @Test
    void castsToTheSameDtypeAndCopiesDisappear() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = cast(%x, dtype="float32");
                  %1 = copy(%0);
                  (%1, cast(%x, dtype="float16"))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) { (%x, cast(%x, dtype="float16")) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void emptyConcatenateOperandsAndWholeSplitPiecesDisappear() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32], %e: Tensor[(2, 0), float32], %y: Tensor[(2, 1), float32]) {
                  %0 = split(%x, indices_or_sections=[3], axis=1);
                  %1 = exp(%0.0);
                  %2 = concatenate((%1, %0.1), axis=-1);
                  %3 = concatenate((%e, %2, %e, %y), axis=1);
                  (%2, %3)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32], %e: Tensor[(2, 0), float32], %y: Tensor[(2, 1), float32]) {
                  %0 = exp(%x);
                  (%0, concatenate((%0, %y), axis=1))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void concatenationsOfOnlyEmptyOrNonEmptyOperandsAndProperSplitPiecesStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2, 4), float32], %e: Tensor[(2, 0), float32], %d: Tensor[(2, ?), float32]) {
                  %0 = split(%x, indices_or_sections=2, axis=1);
                  (concatenate((%e, %e), axis=1), concatenate((%0.0, %0.1), axis=1), concatenate((%e, %d), axis=1))
                }
                """);
    }

    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
            Constant one = new Constant(NDArray.scalar(1f));
            IRModule in = LongChains.chain(lets, x, e -> Call.op("multiply", Call.op("negative", e), one), e -> e);
            PassResult r = LongChains.run(new SimplifyExpr(), in);
            assertTrue(r.changed());
            // Every multiply-by-one is gone.
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                assertFalse(e instanceof Call c && c.callee() instanceof Op op && op.name().equals("multiply"), "lets=" + lets);
            }
        }
    }
}
