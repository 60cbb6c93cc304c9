package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CombineParallelConv2DTest {
    private static final String PASS = "combine-parallel-conv2d";
    private static final String SIG = "%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(4, 3, 3, 3), float32], "
            + "%w2: Tensor[(2, 3, 3, 3), float32], %w3: Tensor[(5, 3, 3, 3), float32]";

    @Test
    void threeBranchesBecomeOneConvAndSlices() {
        String before = "def @main(" + SIG + """
                ) {
                  %0 = nn.conv2d(%x, %w1, padding=[1, 1], channels=4, kernel_size=[3, 3]);
                  %1 = nn.conv2d(%x, %w2, padding=[1, 1], channels=2, kernel_size=[3, 3]);
                  %2 = nn.conv2d(%x, %w3, padding=[1, 1], channels=5, kernel_size=[3, 3]);
                  (nn.relu(%0), %1, add(%2, 1f))
                }
                """;
        assertRewrites(PASS, before, "def @main(" + SIG + """
                ) {
                  %0 = concatenate((%w1, %w2, %w3), axis=0);
                  %1 = nn.conv2d(%x, %0, padding=[1, 1], channels=11, kernel_size=[3, 3]);
                  %2 = strided_slice(%1, begin=[0], end=[4], axes=[1]);
                  %3 = strided_slice(%1, begin=[4], end=[6], axes=[1]);
                  %4 = strided_slice(%1, begin=[6], end=[11], axes=[1]);
                  (nn.relu(%2), %3, add(%4, 1f))
                }
                """);
        assertSameResults(PASS, before);
        // Followed by fusion: each slice fuses with the branch's element-wise op.
        assertSameResults(PASS + ",fuse-ops", before);
    }

    @Test
    void biasAddAndReluFollowersAreCombinedAsFarAsAllBranchesAgree() {
        String sig = "%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(4, 3, 1, 1), float32], %w2: Tensor[(2, 3, 1, 1), float32], "
                + "%w3: Tensor[(5, 3, 1, 1), float32], %b1: Tensor[(4), float32], %b2: Tensor[(2), float32], %b3: Tensor[(5), float32]";
        // All three have bias_add; only two continue with relu, so relu stays per branch.
        String before = "def @main(" + sig + """
                ) {
                  %0 = nn.bias_add(nn.conv2d(%x, %w1), %b1);
                  %1 = nn.bias_add(nn.conv2d(%x, %w2), %b2);
                  %2 = nn.bias_add(nn.conv2d(%x, %w3), %b3);
                  (nn.relu(%0), nn.relu(%1), %2)
                }
                """;
        assertRewrites(PASS, before, "def @main(" + sig + """
                ) {
                  %0 = nn.conv2d(%x, concatenate((%w1, %w2, %w3), axis=0));
                  %1 = nn.bias_add(%0, concatenate((%b1, %b2, %b3), axis=0));
                  (nn.relu(strided_slice(%1, begin=[0], end=[4], axes=[1])), nn.relu(strided_slice(%1, begin=[4], end=[6], axes=[1])),
                   strided_slice(%1, begin=[6], end=[11], axes=[1]))
                }
                """);
        assertSameResults(PASS, before);
        String allRelu = before.replace("(nn.relu(%0), nn.relu(%1), %2)", "(nn.relu(%0), nn.relu(%1), nn.relu(%2))");
        assertRewrites(PASS, allRelu, "def @main(" + sig + """
                ) {
                  %0 = nn.conv2d(%x, concatenate((%w1, %w2, %w3), axis=0));
                  %1 = nn.relu(nn.bias_add(%0, concatenate((%b1, %b2, %b3), axis=0)));
                  (strided_slice(%1, begin=[0], end=[4], axes=[1]), strided_slice(%1, begin=[4], end=[6], axes=[1]),
                   strided_slice(%1, begin=[6], end=[11], axes=[1]))
                }
                """);
        assertSameResults(PASS + ",fuse-ops", allRelu);
    }

    @Test
    void nhwcLayoutSlicesTheLastAxis() {
        String before = """
                def @main(%x: Tensor[(1, 5, 5, 2), float32], %w1: Tensor[(1, 1, 2, 3), float32], %w2: Tensor[(1, 1, 2, 4), float32], %w3: Tensor[(1, 1, 2, 1), float32]) {
                  %0 = nn.conv2d(%x, %w1, data_layout="NHWC", kernel_layout="HWIO");
                  %1 = nn.conv2d(%x, %w2, data_layout="NHWC", kernel_layout="HWIO");
                  %2 = nn.conv2d(%x, %w3, data_layout="NHWC", kernel_layout="HWIO");
                  (%0, %1, %2)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(1, 5, 5, 2), float32], %w1: Tensor[(1, 1, 2, 3), float32], %w2: Tensor[(1, 1, 2, 4), float32], %w3: Tensor[(1, 1, 2, 1), float32]) {
                  %0 = nn.conv2d(%x, concatenate((%w1, %w2, %w3), axis=3), data_layout="NHWC", kernel_layout="HWIO");
                  (strided_slice(%0, begin=[0], end=[3], axes=[3]), strided_slice(%0, begin=[3], end=[7], axes=[3]), strided_slice(%0, begin=[7], end=[8], axes=[3]))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void onlyCompatibleBranchesCombine() {
        // Four convs of %x: three 1x1 stride 1 combine; the stride-2 one stays.
        String before = """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(3, 2, 1, 1), float32], %b: Tensor[(1, 2, 1, 1), float32], %c: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %a);
                  %1 = nn.conv2d(%x, %b, strides=[2, 2]);
                  %2 = nn.conv2d(%x, %b);
                  %3 = nn.conv2d(%x, %c);
                  (%0, %1, %2, %3)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(3, 2, 1, 1), float32], %b: Tensor[(1, 2, 1, 1), float32], %c: Tensor[(2, 2, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, concatenate((%a, %b, %c), axis=0));
                  (strided_slice(%0, begin=[0], end=[3], axes=[1]), nn.conv2d(%x, %b, strides=[2, 2]),
                   strided_slice(%0, begin=[3], end=[4], axes=[1]), strided_slice(%0, begin=[4], end=[6], axes=[1]))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void differentStridesDoNotCombine() {
        // Same weight three times, but stride 1, stride 2, and stride 2 with padding: no three agree.
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(3, 2, 1, 1), float32]) -> (Tensor[(1, 3, 4, 4), float32], Tensor[(1, 3, 2, 2), float32], Tensor[(1, 3, 3, 3), float32]) {
                  (nn.conv2d(%x, %a), nn.conv2d(%x, %a, strides=[2, 2]), nn.conv2d(%x, %a, padding=[1, 1, 1, 1], strides=[2, 2]))
                }
                """);
    }

    @Test
    void differentInputsDoNotCombine() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %y: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(3, 2, 1, 1), float32]) -> (Tensor[(1, 3, 4, 4), float32], Tensor[(1, 3, 4, 4), float32], Tensor[(1, 3, 4, 4), float32]) {
                  (nn.conv2d(%x, %a), nn.conv2d(%y, %a), nn.conv2d(%x, %a))
                }
                """);
    }

    @Test
    void differentKernelShapesOrGroupsDoNotCombine() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(2, 2, 1, 1), float32], %k: Tensor[(2, 2, 3, 3), float32], %g: Tensor[(2, 1, 1, 1), float32]) -> (Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32]) {
                  (nn.conv2d(%x, %a), nn.conv2d(%x, %k, padding=[1, 1]), nn.conv2d(%x, %g, groups=2))
                }
                """);
        // Three grouped convolutions agree on everything but cannot be stacked.
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %g: Tensor[(2, 1, 1, 1), float32]) -> (Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32]) {
                  (nn.conv2d(%x, %g, groups=2), nn.conv2d(%x, %g, groups=2), nn.conv2d(%x, %g, groups=2))
                }
                """);
    }

    private static final String TWO = """
            def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(3, 2, 1, 1), float32], %b: Tensor[(1, 2, 1, 1), float32]) -> (Tensor[(1, 3, 4, 4), float32], Tensor[(1, 1, 4, 4), float32]) {
              (nn.conv2d(%x, %a), nn.conv2d(%x, %b))
            }
            """;

    @Test
    void twoBranchesStayBelowTheDefaultMinimum() {
        assertUnchanged(PASS, TWO);
    }

    @Test
    void minBranchesTwoCombinesTwo() {
        IRModule in = TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule("#[version = \"0.0.5\"]\n" + TWO, "two")).module();
        PassResult r = new Sequential("t", List.of(new CombineParallelConv2D(new CombineParallelConv2D.Options(2))))
                .run(in, new PassContext(PassOptions.level(3).withValidate(true)));
        assertTrue(r.changed());
        assertEquals(1, count(r.module(), "nn.conv2d"));
        assertEquals(2, count(r.module(), "strided_slice"));
        SameResults.assertSameResults(in, r.module(), 1, new Tolerance(1e-5, 1e-6));
    }

    @Test
    void branchesInDifferentBlocksOrWithComputedWeightsDoNotCombine() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(2, 2, 1, 1), float32], %c: bool) -> Tensor[(1, 2, 4, 4), float32] {
                  %0 = nn.conv2d(%x, %a);
                  if (%c) { add(%0, nn.conv2d(%x, %a)) } else { add(%0, nn.conv2d(%x, %a)) }
                }
                """);
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %a: Tensor[(2, 2, 1, 1), float32]) -> (Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32], Tensor[(1, 2, 4, 4), float32]) {
                  (nn.conv2d(%x, %a), nn.conv2d(%x, negative(%a)), nn.conv2d(%x, exp(%a)))
                }
                """);
    }

    @Test
    void hundredThousandNodeChainBeforeTheBranches() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 2, 2, 2));
        Var w = Var.fresh("w", TensorType.of(DType.FLOAT32, 2, 2, 1, 1));
        Expr e = x;
        for (int i = 0; i < 100_000; i++) e = Call.op(i % 2 == 0 ? "negative" : "abs", e);
        List<Expr> convs = new ArrayList<>();
        for (int i = 0; i < 3; i++) convs.add(Call.op("nn.conv2d", e, w));
        IRModule in = TypeInference.infer(IRModule.fromMain(new Function(List.of(x, w), new Tuple(convs)))).module();
        IRModule out = PassAssert.run(PASS, in).module();
        assertEquals(1, count(out, "nn.conv2d"));
        assertEquals(3, count(out, "strided_slice"));
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-5, 1e-6));
    }

    private static int count(IRModule m, String op) {
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow())) if (e instanceof Call c && c.callee() instanceof Op o && o.name().equals(op)) n++;
        return n;
    }
}
