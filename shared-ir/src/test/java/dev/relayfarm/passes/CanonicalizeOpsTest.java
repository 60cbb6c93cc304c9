package dev.relayfarm.passes;

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
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.api.Test;

class CanonicalizeOpsTest {
    private static final String PASS = "canonicalize-ops";

    @Test
    void biasAddBecomesAddWithTrailingUnitAxes() {
        String before = """
                def @main(%x: Tensor[(1, 3, 4, 4), float32], %b: Tensor[(3), float32], %c: Tensor[(4), float32]) {
                  %0 = nn.bias_add(%x, %b);
                  %1 = nn.bias_add(%0, %c, axis=3);
                  nn.bias_add(%1, %c, axis=-2)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(1, 3, 4, 4), float32], %b: Tensor[(3), float32], %c: Tensor[(4), float32]) {
                  %0 = add(%x, expand_dims(%b, axis=1, num_newaxis=2));
                  %1 = add(%0, %c);
                  add(%1, expand_dims(%c, axis=1, num_newaxis=1))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void denseBiasOnTheLastAxisNeedsNoExpand() {
        String before = """
                def @main(%x: Tensor[(2, 5), float32], %b: Tensor[(5), float32]) { nn.bias_add(%x, %b, axis=1) }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 5), float32], %b: Tensor[(5), float32]) { add(%x, %b) }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void transposedConvolutionWhoseKernelIsItsStrideBecomesAOneByOneConvolutionAndADepthToSpace() {
        // ppocr's upsampling: 2x2 kernel, stride 2; each output pixel takes one input pixel through one tap
        String before = """
                def @main(%x: Tensor[(1, 3, 4, 5), float32], %w: Tensor[(3, 2, 2, 2), float32]) {
                  nn.conv2d_transpose(%x, %w, strides=[2, 2], channels=2, kernel_size=[2, 2])
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(1, 3, 4, 5), float32], %w: Tensor[(3, 2, 2, 2), float32]) {
                  %0 = transpose(%w, axes=[1, 2, 3, 0]);
                  %1 = reshape(%0, newshape=[8, 3, 1, 1]);
                  %2 = nn.conv2d(%x, %1, channels=8, kernel_size=[1, 1]);
                  %3 = reshape(%2, newshape=[1, 2, 2, 2, 4, 5]);
                  %4 = transpose(%3, axes=[0, 1, 4, 2, 5, 3]);
                  reshape(%4, newshape=[1, 2, 8, 10])
                }
                """);
        assertSameResults(PASS, before);
        // a 3x3 kernel at stride 3 too; results equal
        assertSameResults(PASS, """
                def @main(%x: Tensor[(2, 4, 3, 2), float32], %w: Tensor[(4, 5, 3, 3), float32]) {
                  nn.conv2d_transpose(%x, %w, strides=[3, 3], channels=5, kernel_size=[3, 3])
                }
                """);
    }

    @Test
    void transposedConvolutionsOfOtherFormsStay() {
        // kernel larger than the stride (taps overlap), padding, output padding, groups
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 3, 4, 5), float32], %w: Tensor[(3, 2, 3, 3), float32]) { nn.conv2d_transpose(%x, %w, strides=[2, 2]) }
                """);
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 3, 4, 5), float32], %w: Tensor[(3, 2, 2, 2), float32]) { nn.conv2d_transpose(%x, %w, strides=[2, 2], padding=[1, 1]) }
                """);
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 3, 4, 5), float32], %w: Tensor[(3, 2, 2, 2), float32]) { nn.conv2d_transpose(%x, %w, strides=[2, 2], output_padding=[1, 1]) }
                """);
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 4, 4, 5), float32], %w: Tensor[(4, 1, 2, 2), float32]) { nn.conv2d_transpose(%x, %w, strides=[2, 2], groups=2) }
                """);
    }

    @Test
    void fewGroupsNoBlockDividesBecomeOneConvolutionWithABlockDiagonalWeight() {
        // ShuffleNet's form: 4 groups of 6 input and 4 output channels (no block of 16, 8 or 4 divides 6), 24 and 16 in all
        String before = """
                def @main(%x: Tensor[(1, 24, 5, 5), float32], %w: Tensor[(16, 6, 1, 1), float32]) {
                  nn.conv2d(%x, %w, groups=4, channels=16, kernel_size=[1, 1])
                }
                """;
        IRModule out = assertSameResults(PASS, before);
        String text = dev.relayfarm.text.RelayPrinter.print(out);
        assertTrue(text.contains("nn.conv2d(%x, %2, groups=1,"), text);
        assertTrue(text.contains("reshape(%w, newshape=[4, 4, 1, 6, 1, 1])") && text.contains("newshape=[16, 24, 1, 1]"), text);
        // a padded, strided 3x3 with 4 groups of 2 input and 4 output channels
        IRModule padded = assertSameResults(PASS, """
                def @main(%x: Tensor[(1, 8, 7, 7), float32], %w: Tensor[(16, 2, 3, 3), float32]) {
                  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=4)
                }
                """);
        assertTrue(dev.relayfarm.text.RelayPrinter.print(padded).contains("groups=1"));
    }

    @Test
    void groupsThatHoldWholeBlocksOrAreManyStayGrouped() {
        // 8 channels a group: alter-op-layout blocks it group by group
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 32, 5, 5), float32], %w: Tensor[(32, 8, 1, 1), float32]) { nn.conv2d(%x, %w, groups=4) }
                """);
        // 8 groups: merging them would do 8 times the work
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 48, 5, 5), float32], %w: Tensor[(48, 6, 1, 1), float32]) { nn.conv2d(%x, %w, groups=8) }
                """);
        // depthwise
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(3, 1, 3, 3), float32]) { nn.conv2d(%x, %w, groups=3) }
                """);
    }

    @Test
    void otherOpsStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2, 5), float32], %b: Tensor[(5), float32]) { add(%x, %b) }
                """);
    }

    @Test
    void longChains() {
        Constant bias = new Constant(NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {1, 2}));
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 2, 3));
            IRModule in = LongChains.chain(lets, x, e -> new Call(Op.get("nn.bias_add"), java.util.List.of(e, bias)), e -> e);
            PassResult r = LongChains.run(new CanonicalizeOps(), in);
            assertTrue(r.changed());
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                assertFalse(e instanceof Call c && c.callee() instanceof Op op && op.name().equals("nn.bias_add"), "lets=" + lets);
            }
        }
    }
}
