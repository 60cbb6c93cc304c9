package dev.relayfarm.passes;

import static dev.relayfarm.passes.MetaText.f32;
import static dev.relayfarm.passes.MetaText.spread;
import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class FoldScaleAxisTest {
    private static final String PASS = "fold-scale-axis";
    private static final String X = "%x: Tensor[(1, 2, 4, 4), float32]";
    private static final NDArray W = spread(1, 3, 2, 3, 3);
    /** Per output channel, as [C, 1, 1] (what the multiply uses) and as [C, 1, 1, 1] (the weight's O axis). */
    private static final NDArray S = f32(new int[] {3, 1, 1}, 0.5, -2, 1.5);
    private static final NDArray S_O = f32(new int[] {3, 1, 1, 1}, 0.5, -2, 1.5);
    private static final NDArray S_VEC = f32(new int[] {3}, 0.5, -2, 1.5);
    private static final NDArray BIAS = spread(2, 3);
    private static final NDArray ADD = spread(3, 3, 1, 1);
    /** Per input channel, [C_in, 1, 1]. */
    private static final NDArray S_IN = f32(new int[] {2, 1, 1}, 0.25, -3);
    private static final NDArray POSITIVE_IN = f32(new int[] {1, 2, 1, 1}, 0.25, 3);
    private static final NDArray POSITIVE_IN_I = f32(new int[] {2, 1, 1}, 0.25, 3);

    private static String m(String body, NDArray... constants) {
        return body + MetaText.of(constants);
    }

    // ---------------------------------------------------------------- backward

    @Test
    void backwardFoldsAnOutputChannelScaleIntoTheWeight() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  multiply(%0, meta[relay.Constant][1])
                }
                """, W, S);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  nn.conv2d(%x, %0, padding=[1, 1])
                }
                """, W, S_O));
        assertSameResults(PASS, before);
    }

    @Test
    void backwardScalesBiasesOnTheWay() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  %1 = nn.bias_add(%0, meta[relay.Constant][2]);
                  %2 = subtract(meta[relay.Constant][3], %1);
                  multiply(meta[relay.Constant][1], %2)
                }
                """, W, S, BIAS, ADD);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = nn.conv2d(%x, %0, padding=[1, 1]);
                  %2 = multiply(meta[relay.Constant][2], meta[relay.Constant][3]);
                  %3 = nn.bias_add(%1, %2);
                  %4 = multiply(meta[relay.Constant][4], meta[relay.Constant][5]);
                  subtract(%4, %3)
                }
                """, W, S_O, BIAS, S_VEC, ADD, S));
        assertSameResults(PASS, before);
    }

    @Test
    void backwardFoldsTwoScalesInARowAndAScalar() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0]);
                  %1 = multiply(%0, meta[relay.Constant][1]);
                  multiply(%1, 2f)
                }
                """, W, S);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = multiply(%0, meta[relay.Constant][2]);
                  nn.conv2d(%x, %1)
                }
                """, W, S_O, f32(new int[] {3, 1, 1, 1}, 2, 2, 2)));
        assertSameResults(PASS, before);
    }

    @Test
    void backwardFoldsIntoDenseUnits() {
        NDArray w = spread(4, 3, 4);
        String before = m("""
                def @main(%x: Tensor[(2, 4), float32]) {
                  %0 = nn.dense(%x, meta[relay.Constant][0], units=3);
                  %1 = nn.bias_add(%0, meta[relay.Constant][2], axis=-1);
                  multiply(%1, meta[relay.Constant][1])
                }
                """, w, S_VEC, BIAS);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(2, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = nn.dense(%x, %0, units=3);
                  %2 = multiply(meta[relay.Constant][2], meta[relay.Constant][3]);
                  nn.bias_add(%1, %2, axis=-1)
                }
                """, w, f32(new int[] {3, 1}, 0.5, -2, 1.5), BIAS, S_VEC));
        assertSameResults(PASS, before);
    }

    @Test
    void backwardFoldsAGroupedConvAndAWeightThatIsAParameter() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(4, 1, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %w, groups=2);
                  multiply(%0, meta[relay.Constant][0])
                }
                """, f32(new int[] {1, 4, 1, 1}, 1, 2, 3, 4));
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(4, 1, 1, 1), float32]) {
                  %0 = multiply(%w, meta[relay.Constant][0]);
                  nn.conv2d(%x, %0, groups=2)
                }
                """, f32(new int[] {4, 1, 1, 1}, 1, 2, 3, 4)));
        assertSameResults(PASS, before);
    }

    @Test
    void backwardScalesBothConvsOfASum() {
        NDArray w2 = spread(11, 3, 2, 1, 1);
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %y: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  %1 = nn.conv2d(%y, meta[relay.Constant][2]);
                  %2 = nn.bias_add(%1, meta[relay.Constant][3]);
                  %3 = add(%0, %2);
                  multiply(%3, meta[relay.Constant][1])
                }
                """, W, S, w2, BIAS);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %y: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = nn.conv2d(%x, %0, padding=[1, 1]);
                  %2 = multiply(meta[relay.Constant][2], meta[relay.Constant][1]);
                  %3 = nn.conv2d(%y, %2);
                  %4 = multiply(meta[relay.Constant][3], meta[relay.Constant][4]);
                  %5 = nn.bias_add(%3, %4);
                  add(%1, %5)
                }
                """, W, S_O, w2, BIAS, S_VEC));
        assertSameResults(PASS, before);
        // Both branches must be scalable: a parameter on one side stops the fold.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %y: Tensor[(1, 3, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  multiply(add(%0, %y), meta[relay.Constant][1])
                }
                """, W, S));
    }

    @Test
    void aWeightOfAnotherDTypeKeepsItsScale() {
        // found by the ONNX fuzz campaign: a Gemm whose B is uint16 imports as dense(float32, uint16); folding the
        // float scale into the weight made multiply(uint16, float32), an ill-typed module
        assertUnchanged(PASS, """
                #[version = "0.0.5"]
                def @main(%a: Tensor[(3, 5), float32], %b: Tensor[(4, 5), uint16]) {
                  %0 = nn.dense(%a, %b);
                  multiply(%0, 0.5f)
                }
                """);
    }

    @Test
    void aFoldedTreeCanBeFoldedAgain() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0]);
                  %1 = nn.bias_add(%0, meta[relay.Constant][2]);
                  %2 = multiply(%1, meta[relay.Constant][1]);
                  multiply(%2, meta[relay.Constant][1])
                }
                """, W, S, BIAS);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  %1 = multiply(%0, meta[relay.Constant][1]);
                  %2 = nn.conv2d(%x, %1);
                  %3 = multiply(meta[relay.Constant][2], meta[relay.Constant][3]);
                  %4 = multiply(%3, meta[relay.Constant][3]);
                  nn.bias_add(%2, %4)
                }
                """, W, S_O, BIAS, S_VEC));
        assertSameResults(PASS, before);
    }

    // ---------------------------------------------------------------- forward

    @Test
    void forwardFoldsAnInputChannelScaleIntoTheWeight() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(%x, meta[relay.Constant][1]);
                  nn.conv2d(%0, meta[relay.Constant][0], padding=[1, 1])
                }
                """, W, S_IN);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  nn.conv2d(%x, %0, padding=[1, 1])
                }
                """, W, S_IN));
        assertSameResults(PASS, before);
    }

    @Test
    void forwardGoesThroughReluWhenTheScaleIsPositive() {
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(meta[relay.Constant][1], %x);
                  %1 = nn.relu(%0);
                  nn.conv2d(%1, meta[relay.Constant][0])
                }
                """, W, POSITIVE_IN);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.relu(%x);
                  %1 = multiply(meta[relay.Constant][0], meta[relay.Constant][1]);
                  nn.conv2d(%0, %1)
                }
                """, W, POSITIVE_IN_I));
        assertSameResults(PASS, before);
    }

    @Test
    void forwardGoesThroughBiasesAsBiasOverScale() {
        // x * s + b = (x + b / s) * s: the batch-norm-then-relu-then-conv shape of real networks.
        String before = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(%x, meta[relay.Constant][1]);
                  %1 = add(%0, meta[relay.Constant][2]);
                  %2 = nn.relu(%1);
                  nn.conv2d(%2, meta[relay.Constant][0])
                }
                """, W, POSITIVE_IN, f32(new int[] {2, 1, 1}, 0.5, -1));
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = divide(meta[relay.Constant][2], meta[relay.Constant][1]);
                  %1 = add(%x, %0);
                  %2 = nn.relu(%1);
                  %3 = multiply(meta[relay.Constant][0], meta[relay.Constant][3]);
                  nn.conv2d(%2, %3)
                }
                """, W, POSITIVE_IN, f32(new int[] {2, 1, 1}, 0.5, -1), POSITIVE_IN_I));
        assertSameResults(PASS, before);
        // A zero scale cannot divide the bias.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(%x, meta[relay.Constant][1]);
                  nn.conv2d(subtract(meta[relay.Constant][2], %0), meta[relay.Constant][0])
                }
                """, W, f32(new int[] {2, 1, 1}, 0, 2), f32(new int[] {2, 1, 1}, 0.5, -1)));
    }

    @Test
    void forwardFoldsIntoDenseInputs() {
        NDArray w = spread(4, 3, 4);
        NDArray s = f32(new int[] {4}, 1, -0.5, 2, 0.25);
        String before = m("""
                def @main(%x: Tensor[(2, 4), float32]) {
                  nn.dense(multiply(%x, meta[relay.Constant][1]), meta[relay.Constant][0])
                }
                """, w, s);
        assertRewrites(PASS, before, m("""
                def @main(%x: Tensor[(2, 4), float32]) {
                  nn.dense(%x, multiply(meta[relay.Constant][0], meta[relay.Constant][1]))
                }
                """, w, s));
        assertSameResults(PASS, before);
    }

    // ---------------------------------------------------------------- what must not change

    @Test
    void aScaleThatIsNotAConstantStays() {
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %s: Tensor[(3, 1, 1), float32]) {
                  multiply(nn.conv2d(%x, meta[relay.Constant][0]), %s)
                }
                """, W));
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %s: Tensor[(2, 1, 1), float32]) {
                  nn.conv2d(multiply(%x, %s), meta[relay.Constant][0])
                }
                """, W));
    }

    @Test
    void aScaleThatIsNotPerChannelStays() {
        // Along W (the last axis), and spread over C and H: neither is a per-output-channel scale.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  %1 = multiply(%0, meta[relay.Constant][1]);
                  multiply(%1, meta[relay.Constant][2])
                }
                """, W, spread(5, 4), spread(6, 3, 4, 1)));
        // A scale that broadcasts the conv output up to a batch of 2 is not a scale of it.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  multiply(nn.conv2d(%x, meta[relay.Constant][0]), meta[relay.Constant][1])
                }
                """, W, spread(7, 2, 3, 1, 1)));
        // The input's scale varies along H.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  nn.conv2d(multiply(%x, meta[relay.Constant][1]), meta[relay.Constant][0])
                }
                """, W, spread(8, 4, 1)));
    }

    @Test
    void aConvOutputWithOtherConsumersStays() {
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0]);
                  %1 = multiply(%0, meta[relay.Constant][1]);
                  (%1, %0)
                }
                """, W, S));
        // The same for a bias in the chain, and for the scaled input of a conv.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0]);
                  %1 = nn.bias_add(%0, meta[relay.Constant][2]);
                  %2 = multiply(%1, meta[relay.Constant][1]);
                  add(%2, %1)
                }
                """, W, S, BIAS));
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(%x, meta[relay.Constant][1]);
                  %1 = nn.conv2d(%0, meta[relay.Constant][0]);
                  (%1, %0)
                }
                """, W, S_IN));
    }

    @Test
    void reluNegativeScalesLetsGroupsAndLayoutsStay() {
        // relu(y) * s is not relu(y * s) for negative s; backward folding does not cross relu at all.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  multiply(nn.relu(nn.conv2d(%x, meta[relay.Constant][0])), meta[relay.Constant][1])
                }
                """, W, S));
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  nn.conv2d(nn.relu(multiply(%x, meta[relay.Constant][1])), meta[relay.Constant][0])
                }
                """, W, S_IN));
        // The pass works on dataflow; a let-bound conv is not looked through.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  let %c = nn.conv2d(%x, meta[relay.Constant][0]);
                  multiply(%c, meta[relay.Constant][1])
                }
                """, W, S));
        // A grouped conv's input channels do not map one to one onto the weight's I axis.
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  nn.conv2d(multiply(%x, meta[relay.Constant][1]), meta[relay.Constant][0], groups=2)
                }
                """, spread(9, 2, 1, 3, 3), S_IN));
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 4, 4, 2), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], data_layout="NHWC", kernel_layout="HWIO");
                  multiply(%0, meta[relay.Constant][1])
                }
                """, spread(10, 3, 3, 2, 3), S_VEC));
    }

    @Test
    void fusedFunctionsAreLeftAlone() {
        assertUnchanged(PASS, m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = fn (%p0: Tensor[(1, 2, 4, 4), float32], Primitive=1) {
                    multiply(nn.conv2d(%p0, meta[relay.Constant][0]), meta[relay.Constant][1])
                  };
                  %0(%x)
                }
                """, W, S));
    }

    @Test
    void optionsSelectTheDirections() {
        String both = m("""
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = multiply(%x, meta[relay.Constant][2]);
                  %1 = nn.conv2d(%0, meta[relay.Constant][0]);
                  multiply(%1, meta[relay.Constant][1])
                }
                """, W, S, S_IN);
        IRModule in = TypeInference.infer(RelayParser.parseModule("#[version = \"0.0.5\"]\n" + both)).module();
        for (FoldScaleAxis.Options o : List.of(new FoldScaleAxis.Options(true, false), new FoldScaleAxis.Options(false, true),
                FoldScaleAxis.Options.DEFAULT)) {
            PassResult r = new Sequential("s", List.of(new FoldScaleAxis(o))).run(in, new PassContext(PassOptions.level(3).withValidate(true)));
            Expr body = r.module().main().orElseThrow().body();
            long multiplies = ExprTraversal.postOrder(body).stream().filter(e -> isOp(e, "multiply")).count();
            boolean inputScaled = ExprTraversal.postOrder(body).stream()
                    .anyMatch(e -> isOp(e, "nn.conv2d") && isOp(((Call) e).args().get(0), "multiply"));
            boolean outputScaled = isOp(body, "multiply");
            assertTrue(r.changed());
            assertEquals(!o.forward(), inputScaled, o.toString());
            assertEquals(!o.backward(), outputScaled, o.toString());
            assertEquals(2, multiplies, "either scale is a multiply of the data or of the weight: " + o);
            for (long seed = 1; seed <= 2; seed++) SameResults.assertSameResults(in, r.module(), seed, new dev.relayfarm.interp.Tolerance(1e-5, 1e-6));
        }
    }

    /** 100,000 nodes before the conv, as a dataflow chain and as a let chain: no stack overflow, and the fold still happens. */
    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            TensorType t = TensorType.of(DType.FLOAT32, 1, 2, 4, 4);
            Var x = Var.fresh("x", t);
            Expr cur = x;
            List<Var> vars = new java.util.ArrayList<>();
            List<Expr> values = new java.util.ArrayList<>();
            for (int i = 0; i < 100_000; i++) {
                Expr next = Call.op("negative", cur);
                if (lets) {
                    Var v = Var.fresh("v");
                    vars.add(v);
                    values.add(next);
                    cur = v;
                } else {
                    cur = next;
                }
            }
            Expr body = Call.op("multiply", Call.op("nn.conv2d", cur, new Constant(W)), new Constant(S));
            for (int i = vars.size() - 1; i >= 0; i--) body = new Let(vars.get(i), values.get(i), body);
            IRModule in = IRModule.fromMain(new Function(List.of(x), body));
            PassResult r = PassAssert.run(PASS, in);
            assertTrue(r.changed());
            Expr tail = r.module().main().orElseThrow().body();
            while (tail instanceof Let l) tail = l.body();
            assertTrue(isOp(tail, "nn.conv2d") && isOp(((Call) tail).args().get(1), "multiply"), "lets=" + lets);
            assertFalse(isOp(tail, "multiply"));
        }
    }

    private static boolean isOp(Expr e, String name) {
        return e instanceof Call c && c.callee() instanceof Op op && op.name().equals(name);
    }
}
