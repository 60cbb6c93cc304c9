package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConvertLayoutTest {
    private static final String P = "convert-layout";

    private static final String CONV_BIAS_RELU = """
            def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
              %0 = nn.conv2d(%x, %w, padding=[1, 1]);
              %1 = nn.bias_add(%0, %b);
              nn.relu(%1)
            }
            """;

    @Test
    void convBiasReluBecomesNhwcWithTransformsAtTheEdges() {
        assertRewrites(P, CONV_BIAS_RELU, """
                def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
                  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
                  %3 = nn.bias_add(%2, %b, axis=3);
                  %4 = nn.relu(%3);
                  layout_transform(%4, src_layout="NHWC", dst_layout="NCHW")
                }
                """);
        assertSameResults(P, CONV_BIAS_RELU);
    }

    private static final String TWO_CONVS = """
            def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(6, 4, 3, 3), float32], %w2: Tensor[(6, 6, 1, 1), float32],
                      %c: Tensor[(6, 1, 1), float32]) {
              %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
              %1 = add(%0, %c);
              %2 = nn.conv2d(%1, %w2);
              %3 = multiply(%2, 2f);
              %4 = concatenate((%1, %3), axis=1);
              %5 = nn.max_pool2d(%4, pool_size=[2, 2], strides=[2, 2]);
              reshape(%5, newshape=[1, -1])
            }
            """;

    @Test
    void layoutFlowsThroughBroadcastConcatAndPoolAndGoesBackBeforeReshape() {
        assertRewrites(P, TWO_CONVS, """
                def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(6, 4, 3, 3), float32], %w2: Tensor[(6, 6, 1, 1), float32],
                          %c: Tensor[(6, 1, 1), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
                  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="HWIO");
                  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
                  %3 = expand_dims(%c, axis=0, num_newaxis=1);
                  %4 = layout_transform(%3, src_layout="NCHW", dst_layout="NHWC");
                  %5 = add(%2, %4);
                  %6 = layout_transform(%w2, src_layout="OIHW", dst_layout="HWIO");
                  %7 = nn.conv2d(%5, %6, data_layout="NHWC", kernel_layout="HWIO");
                  %8 = multiply(%7, 2f);
                  %9 = concatenate((%5, %8), axis=3);
                  %10 = nn.max_pool2d(%9, pool_size=[2, 2], strides=[2, 2], layout="NHWC");
                  %11 = layout_transform(%10, src_layout="NHWC", dst_layout="NCHW");
                  reshape(%11, newshape=[1, -1])
                }
                """);
        assertSameResults(P, TWO_CONVS);
    }

    @Test
    void layoutSensitiveConsumersGetATransformBackOnce() {
        String before = """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %w);
                  %1 = nn.softmax(%0, axis=1);
                  %2 = sum(%0, axis=[1]);
                  (%1, %2, %0)
                }
                """;
        assertRewrites(P, before, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 1, 1), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
                  %2 = nn.conv2d(%0, %1, data_layout="NHWC", kernel_layout="HWIO");
                  %3 = layout_transform(%2, src_layout="NHWC", dst_layout="NCHW");
                  (nn.softmax(%3, axis=1), sum(%3, axis=[1]), %3)
                }
                """);
        assertSameResults(P, before);
    }

    @Test
    void inverseTransformsCancel() {
        // The program asks for NHWC itself: the conv's NHWC result is used as it is.
        String before = """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
                  %0 = nn.conv2d(%x, %w);
                  %1 = nn.relu(%0);
                  layout_transform(%1, src_layout="NCHW", dst_layout="NHWC")
                }
                """;
        assertRewrites(P, before, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
                  %2 = nn.conv2d(%0, %1, data_layout="NHWC", kernel_layout="HWIO");
                  nn.relu(%2)
                }
                """);
        assertSameResults(P, before);
        // An input already transformed from NHWC is taken before that transform.
        assertRewrites(P, """
                def @main(%x: Tensor[(1, 4, 4, 2), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NHWC", dst_layout="NCHW");
                  nn.conv2d(%0, %w)
                }
                """, """
                def @main(%x: Tensor[(1, 4, 4, 2), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
                  %0 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
                  %1 = nn.conv2d(%x, %0, data_layout="NHWC", kernel_layout="HWIO");
                  layout_transform(%1, src_layout="NHWC", dst_layout="NCHW")
                }
                """);
    }

    @Test
    void leavesAloneWhatIsAlreadyInTheDesiredLayoutOrHasNoConv() {
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 4, 4, 2), float32], %w: Tensor[(3, 3, 2, 3), float32]) {
                  nn.relu(nn.conv2d(%x, %w, data_layout="NHWC", kernel_layout="HWIO"))
                }
                """);
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.max_pool2d(%x, pool_size=[2, 2]);
                  nn.relu(%0)
                }
                """);
    }

    @Test
    void desiredLayoutsForPoolsAndNchw() {
        ConvertLayout toNchw = new ConvertLayout(new ConvertLayout.Options(Map.of("nn.conv2d", List.of("NCHW", "default"),
                "nn.avg_pool2d", List.of("NHWC"))));
        String before = """
                def @main(%x: Tensor[(1, 4, 4, 2), float32], %w: Tensor[(3, 3, 2, 3), float32], %y: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
                  (nn.relu(%0), nn.avg_pool2d(%y, pool_size=[2, 2]))
                }
                """;
        IRModule in = TypeInference.infer(RelayParser.parseModule(before, "t")).module();
        PassContext ctx = new PassContext(PassOptions.level(3));
        IRModule out = new Sequential("t", List.of(toNchw)).run(in, ctx).module();
        IRModule want = TypeInference.infer(RelayParser.parseModule("""
                def @main(%x: Tensor[(1, 4, 4, 2), float32], %w: Tensor[(3, 3, 2, 3), float32], %y: Tensor[(1, 2, 4, 4), float32]) {
                  %0 = layout_transform(%x, src_layout="NHWC", dst_layout="NCHW");
                  %1 = layout_transform(%w, src_layout="HWIO", dst_layout="OIHW");
                  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NCHW", kernel_layout="OIHW");
                  %3 = nn.relu(%2);
                  %4 = layout_transform(%y, src_layout="NCHW", dst_layout="NHWC");
                  %5 = nn.avg_pool2d(%4, pool_size=[2, 2], layout="NHWC");
                  (layout_transform(%3, src_layout="NCHW", dst_layout="NHWC"), layout_transform(%5, src_layout="NHWC", dst_layout="NCHW"))
                }
                """, "want")).module();
        dev.relayfarm.ir.StructuralEquality.diff(out, want).ifPresent(d -> org.junit.jupiter.api.Assertions.fail(
                d.message() + "\n" + dev.relayfarm.text.RelayPrinter.print(out)));
        SameResults.assertSameResults(in, out, 1, new dev.relayfarm.interp.Tolerance(1e-5, 1e-6));
    }

    @Test
    void optionsAreChecked() {
        assertEquals("convert-layout: no layout conversion for operator nn.dense (known: nn.conv2d, nn.max_pool2d, nn.avg_pool2d, "
                + "nn.global_avg_pool2d, nn.global_max_pool2d)", assertThrows(IllegalArgumentException.class,
                () -> new ConvertLayout.Options(Map.of("nn.dense", List.of("NC")))).getMessage());
        assertEquals("convert-layout: nn.conv2d: layout must be a permutation of NCHW, got \"NCHW8c\"", assertThrows(IllegalArgumentException.class,
                () -> new ConvertLayout.Options(Map.of("nn.conv2d", List.of("NCHW8c", "OIHW")))).getMessage());
        assertEquals("convert-layout: nn.conv2d: no default kernel layout for data layout HWCN", assertThrows(IllegalArgumentException.class,
                () -> new ConvertLayout.Options(Map.of("nn.conv2d", List.of("HWCN", "default")))).getMessage());
        assertEquals("convert-layout: nn.conv2d wants [data, kernel] layouts, got [NHWC]", assertThrows(IllegalArgumentException.class,
                () -> new ConvertLayout.Options(Map.of("nn.conv2d", List.of("NHWC")))).getMessage());
    }

    @Test
    void longDataflowChainAfterAConvStaysInTheNewLayout() {
        int n = 100_000;
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(1, 2, 2, 2), float32], %w: Tensor[(2, 2, 1, 1), float32]) {\n");
        sb.append("  %0 = nn.conv2d(%x, %w);\n");
        for (int i = 1; i <= n; i++) sb.append("  %").append(i).append(" = negative(%").append(i - 1).append(");\n");
        sb.append("  %").append(n).append("\n}\n");
        IRModule out = PassAssert.run(P, sb.toString()).module();
        int transforms = 0, negatives = 0;
        for (Expr e : ExprTraversal.postOrder(out.lookup(new dev.relayfarm.ir.GlobalVar("main")))) {
            if (e instanceof Call c && c.callee() instanceof Op op) {
                if (op.name().equals("layout_transform")) transforms++;
                if (op.name().equals("negative")) negatives++;
            }
        }
        assertEquals(3, transforms, "data and weight in, result out");
        assertEquals(n, negatives);
        assertTrue(out.lookup(new dev.relayfarm.ir.GlobalVar("main")).body() instanceof Call c
                && c.callee().equals(Op.get("layout_transform")));
    }
}
