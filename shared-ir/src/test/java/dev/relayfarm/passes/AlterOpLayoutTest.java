package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AlterOpLayoutTest {
    private static final String P = "alter-op-layout";

    private static final String CONV_RELU_CONV = """
            def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(16, 32, 1, 1), float32],
                      %c: Tensor[(16, 1, 1), float32]) {
              %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
              %1 = nn.relu(%0);
              %2 = nn.conv2d(%1, %w2);
              %3 = add(%2, %c);
              nn.batch_flatten(%3)
            }
            """;

    @Test
    void consecutiveConvsStayBlocked() {
        assertRewrites(P, CONV_RELU_CONV, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(16, 32, 1, 1), float32],
                          %c: Tensor[(16, 1, 1), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %3 = nn.relu(%2);
                  %4 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %5 = nn.contrib_conv2d_NCHWc(%3, %4, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %6 = expand_dims(%c, axis=0, num_newaxis=1);
                  %7 = layout_transform(%6, src_layout="NCHW", dst_layout="NCHW16c");
                  %8 = add(%5, %7);
                  %9 = layout_transform(%8, src_layout="NCHW16c", dst_layout="NCHW");
                  nn.batch_flatten(%9)
                }
                """);
        assertSameResults(P, CONV_RELU_CONV);
    }

    private static final String BIAS_SOFTMAX = """
            def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(24, 8, 3, 3), float32], %b: Tensor[(24), float32],
                      %s: Tensor[(1, 1, 4, 4), float32]) {
              %0 = nn.conv2d(%x, %w, padding=[1, 1]);
              %1 = nn.bias_add(%0, %b);
              %2 = multiply(%1, %s);
              nn.softmax(%2, axis=1)
            }
            """;

    @Test
    void blockedBiasAddBecomesAnAddAndSoftmaxGetsNchwBack() {
        // 24 channels: 16 does not divide them, 8 does; a size-1 channel operand is blocked by 1.
        assertRewrites(P, BIAS_SOFTMAX, """
                def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(24, 8, 3, 3), float32], %b: Tensor[(24), float32],
                          %s: Tensor[(1, 1, 4, 4), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW8i8o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c");
                  %3 = expand_dims(%b, axis=1, num_newaxis=2);
                  %4 = expand_dims(%3, axis=0, num_newaxis=1);
                  %5 = layout_transform(%4, src_layout="NCHW", dst_layout="NCHW8c");
                  %6 = add(%2, %5);
                  %7 = layout_transform(%s, src_layout="NCHW", dst_layout="NCHW1c");
                  %8 = multiply(%6, %7);
                  %9 = layout_transform(%8, src_layout="NCHW8c", dst_layout="NCHW");
                  nn.softmax(%9, axis=1)
                }
                """);
        assertSameResults(P, BIAS_SOFTMAX);
    }

    @Test
    void concatOfBlockedBranchesAndAPoolInBetween() {
        String before = """
                def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 1, 1), float32], %w2: Tensor[(8, 8, 3, 3), float32],
                          %w3: Tensor[(16, 16, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %w1);
                  %1 = nn.conv2d(%x, %w2, padding=[1, 1]);
                  %2 = concatenate((%0, %1), axis=1);
                  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);
                  %4 = nn.conv2d(%3, %w3);
                  nn.global_avg_pool2d(%4)
                }
                """;
        IRModule out = assertSameResults(P, before);
        Map<String, Integer> n = countOps(out);
        assertEquals(3, n.get("nn.contrib_conv2d_NCHWc"));
        assertEquals(null, n.get("nn.conv2d"));
        // x in once (shared by both convs), three weights, the pool's NCHW8c to the next conv's NCHW16c, and out after the global pool
        assertEquals(6, n.get("layout_transform"), () -> dev.relayfarm.text.RelayPrinter.print(out));
        assertEquals(1, countCallsWithAttr(out, "nn.max_pool2d", "layout=\"NCHW8c\""));
        assertEquals(1, countCallsWithAttr(out, "nn.global_avg_pool2d", "layout=\"NCHW16c\""));
    }

    private static long countCallsWithAttr(IRModule m, String op, String attr) {
        String text = dev.relayfarm.text.RelayPrinter.print(m);
        return text.lines().filter(l -> l.contains(op + "(") && l.contains(attr)).count();
    }

    private static final String CONV_POOL_CONV = """
            def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(16, 16, 3, 3), float32], %w2: Tensor[(32, 16, 3, 3), float32]) {
              %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
              %1 = nn.relu(%0);
              %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
              %3 = nn.conv2d(%2, %w2, padding=[1, 1]);
              %4 = nn.avg_pool2d(%3, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]);
              nn.global_max_pool2d(%4)
            }
            """;

    @Test
    void poolsBetweenConvsStayBlocked() {
        assertRewrites(P, CONV_POOL_CONV, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w1: Tensor[(16, 16, 3, 3), float32], %w2: Tensor[(32, 16, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %3 = nn.relu(%2);
                  %4 = nn.max_pool2d(%3, pool_size=[2, 2], strides=[2, 2], layout="NCHW16c");
                  %5 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %6 = nn.contrib_conv2d_NCHWc(%4, %5, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %7 = nn.avg_pool2d(%6, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout="NCHW16c");
                  %8 = nn.global_max_pool2d(%7, layout="NCHW16c");
                  layout_transform(%8, src_layout="NCHW16c", dst_layout="NCHW")
                }
                """);
        assertSameResults(P, CONV_POOL_CONV);
    }

    @Test
    void poolsWithAnotherOutLayoutOrNoBlockedInputKeepTheirLayout() {
        // out_layout differs from layout: the pool reads NCHW, so the value goes back before it
        assertRewrites(P, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
                  nn.max_pool2d(nn.conv2d(%x, %w), pool_size=[2, 2], out_layout="NHWC")
                }
                """, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %3 = layout_transform(%2, src_layout="NCHW16c", dst_layout="NCHW");
                  nn.max_pool2d(%3, pool_size=[2, 2], out_layout="NHWC")
                }
                """);
        // no convolution before it: nothing to follow
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32]) { nn.avg_pool2d(%x, pool_size=[2, 2]) }
                """);
    }

    @Test
    void convolutionsTheHookDeclinesKeepTheirLayout() {
        // 10 input channels: no block size divides them (not even half a vector), and they are more than one vector's worth
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 10, 8, 8), float32], %w: Tensor[(16, 10, 3, 3), float32]) { nn.relu(nn.conv2d(%x, %w)) }
                """);
        // grouped, 2 channels a group: no block fits inside a group
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 2, 3, 3), float32]) { nn.conv2d(%x, %w, groups=8) }
                """);
        // depthwise with a channel multiplier (two filters per input channel): a lane would read another channel than its own
        assertUnchanged(P, """
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(32, 1, 3, 3), float32]) { nn.conv2d(%x, %w, groups=16) }
                """);
        // (a dynamic batch or image size is blocked: aDynamicBatchKeepsTheBlockedLayout, aDynamicImageSizeKeepsTheBlockedLayout)
        // no hooks at all
        IRModule in = TypeInference.infer(RelayParser.parseModule(CONV_RELU_CONV, "t")).module();
        PassResult r = new Sequential("t", List.of(new AlterOpLayout(new AlterOpLayout.Options(AlterLayoutHooks.none()))))
                .run(in, new PassContext(PassOptions.level(3)));
        assertTrue(!r.changed() && r.module() == in);
    }

    @Test
    void aDynamicBatchKeepsTheBlockedLayout() {
        // the VM runs the blocked convolution and its transforms row by row (kernel/lower/RowKernels): all keep the batch first
        assertRewrites(P, """
                def @main(%x: Tensor[(?, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) { nn.relu(nn.conv2d(%x, %w)) }
                """, """
                def @main(%x: Tensor[(?, 16, 8, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  %3 = nn.relu(%2);
                  layout_transform(%3, src_layout="NCHW16c", dst_layout="NCHW")
                }
                """);
    }

    @Test
    void aDynamicImageSizeKeepsTheBlockedLayout() {
        // only the channels are split into blocks: the VM's width kernels (kernel/lower/WidthKernels) run the blocked
        // convolution and its transforms for any height or width
        assertRewrites(P, """
                def @main(%x: Tensor[(1, 16, ?, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) { nn.conv2d(%x, %w) }
                """, """
                def @main(%x: Tensor[(1, 16, ?, 8), float32], %w: Tensor[(16, 16, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
                  layout_transform(%2, src_layout="NCHW16c", dst_layout="NCHW")
                }
                """);
    }

    private static final String DEPTHWISE_THEN_GROUPED = """
            def @main(%x: Tensor[(1, 32, 8, 8), float32], %dw: Tensor[(32, 1, 3, 3), float32], %gw: Tensor[(48, 8, 1, 1), float32]) {
              %0 = nn.conv2d(%x, %dw, strides=[2, 2], padding=[1, 1], groups=32);
              %1 = nn.relu(%0);
              nn.conv2d(%1, %gw, groups=4)
            }
            """;

    @Test
    void depthwiseAndGroupedConvolutionsAreBlocked() {
        // depthwise: the channels are the lanes, the weight blocks output channels only (one input channel a filter); grouped:
        // blocked by what divides a group (8 input, 12 output channels: 8 and 4), each group whole chunks. The depthwise
        // convolution takes the grouped one's 8-channel block for its 32 channels (16 on its own): no transform between
        assertRewrites(P, DEPTHWISE_THEN_GROUPED, """
                def @main(%x: Tensor[(1, 32, 8, 8), float32], %dw: Tensor[(32, 1, 3, 3), float32], %gw: Tensor[(48, 8, 1, 1), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
                  %1 = layout_transform(%dw, src_layout="OIHW", dst_layout="OIHW1i8o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, strides=[2, 2], padding=[1, 1], groups=32, data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c");
                  %3 = nn.relu(%2);
                  %4 = layout_transform(%gw, src_layout="OIHW", dst_layout="OIHW8i4o");
                  %5 = nn.contrib_conv2d_NCHWc(%3, %4, groups=4, data_layout="NCHW8c", kernel_layout="OIHW8i4o", out_layout="NCHW4c");
                  layout_transform(%5, src_layout="NCHW4c", dst_layout="NCHW")
                }
                """);
        assertSameResults(P, DEPTHWISE_THEN_GROUPED);
    }

    @Test
    void aDepthwiseConvolutionTakesTheBlockOfTheGroupedConvolutionItFeeds() {
        // ShuffleNet's unit: grouped 1x1 (4 groups of 12 channels: 4-lane blocks), depthwise 3x3 on the same 48 channels
        // (16 lanes on its own), grouped 1x1 again: the depthwise one takes the next one's 4 lanes, no transform between
        String unit = """
                def @main(%x: Tensor[(1, 48, 6, 6), float32], %g1: Tensor[(48, 12, 1, 1), float32], %dw: Tensor[(48, 1, 3, 3), float32],
                          %g2: Tensor[(48, 12, 1, 1), float32]) {
                  %0 = nn.conv2d(%x, %g1, groups=4);
                  %1 = nn.conv2d(%0, %dw, padding=[1, 1], groups=48);
                  nn.conv2d(%1, %g2, groups=4)
                }
                """;
        IRModule out = assertSameResults(P, unit);
        String text = dev.relayfarm.text.RelayPrinter.print(out);
        assertTrue(text.contains("kernel_layout=\"OIHW1i4o\"") && !text.contains("16c"), text);
        assertEquals(2, text.split("layout_transform\\(").length - 1 - 3, text); // the data in and out, plus three weights
    }

    @Test
    void channelCountsOnlyHalfAVectorDividesAreBlockedByIt() {
        // blazeface's 28 -> 36 channels: 4-lane blocks on both sides
        assertRewrites(P, """
                def @main(%x: Tensor[(1, 28, 8, 8), float32], %w: Tensor[(36, 28, 1, 1), float32]) { nn.conv2d(%x, %w) }
                """, """
                def @main(%x: Tensor[(1, 28, 8, 8), float32], %w: Tensor[(36, 28, 1, 1), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW4i4o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW4c");
                  layout_transform(%2, src_layout="NCHW4c", dst_layout="NCHW")
                }
                """);
    }

    @Test
    void aFirstLayerTakesAllItsInputChannelsAsOneBlock() {
        String first = """
                def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(16, 3, 3, 3), float32]) { nn.relu(nn.conv2d(%x, %w, strides=[2, 2])) }
                """;
        assertRewrites(P, first, """
                def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(16, 3, 3, 3), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW3c");
                  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW3i16o");
                  %2 = nn.contrib_conv2d_NCHWc(%0, %1, strides=[2, 2], data_layout="NCHW3c", kernel_layout="OIHW3i16o", out_layout="NCHW16c");
                  %3 = nn.relu(%2);
                  layout_transform(%3, src_layout="NCHW16c", dst_layout="NCHW")
                }
                """);
        assertSameResults(P, first);
    }

    @Test
    void targetsFillTheirOwnHooks() {
        AlterLayoutHooks eights = CpuLayoutHooks.hooks(List.of(8));
        IRModule in = TypeInference.infer(RelayParser.parseModule(CONV_RELU_CONV, "t")).module();
        IRModule out = new Sequential("t", List.of(new AlterOpLayout(new AlterOpLayout.Options(eights))))
                .run(in, new PassContext(PassOptions.level(3))).module();
        String text = dev.relayfarm.text.RelayPrinter.print(out);
        assertTrue(text.contains("kernel_layout=\"OIHW8i8o\"") && !text.contains("16c"), text);
        assertThrows(IllegalArgumentException.class, () -> eights.with("nn.conv2d", (c, a, r) -> Optional.empty()));
        assertThrows(IllegalArgumentException.class, () -> CpuLayoutHooks.hooks(List.of(0)));
    }

    @Test
    void theTargetInThePassOptionsChoosesTheBlocks() {
        IRModule in = TypeInference.infer(RelayParser.parseModule(CONV_RELU_CONV, "t")).module();
        Map<String, String> kernelLayouts = Map.of("c -mcpu=x86-64-v3", "OIHW16i16o", "c -mcpu=x86-64-v4", "OIHW16i16o", "c -mcpu=x86-64", "OIHW8i8o",
                "c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", "OIHW8i8o");
        for (var e : kernelLayouts.entrySet()) {
            Target target = Target.parse(e.getKey());
            IRModule pass = new Sequential("t", List.of(new AlterOpLayout())).run(in, new PassContext(PassOptions.level(3).withTarget(target))).module();
            IRModule pipeline = OptPipeline.optimize(in, 3, target);
            for (IRModule out : List.of(pass, pipeline)) {
                String text = dev.relayfarm.text.RelayPrinter.print(out);
                assertTrue(text.contains("kernel_layout=\"" + e.getValue() + "\""), e.getKey() + ": " + text);
            }
        }
    }

    @Test
    void isInTheOptPipelineAtLevel3() {
        assertTrue(OptPipeline.ORDER.contains(P));
        assertEquals(3, PassRegistry.get(P).info().optLevel());
        assertTrue(!OptPipeline.ORDER.contains("convert-layout"));
    }

    @Test
    void longChainBetweenTwoConvsStaysBlocked() {
        int n = 100_000;
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(1, 8, 2, 2), float32], %w: Tensor[(8, 8, 1, 1), float32]) {\n");
        sb.append("  %0 = nn.conv2d(%x, %w);\n");
        for (int i = 1; i <= n; i++) sb.append("  %").append(i).append(" = negative(%").append(i - 1).append(");\n");
        sb.append("  nn.conv2d(%").append(n).append(", %w)\n}\n");
        IRModule out = PassAssert.run(P, sb.toString()).module();
        Map<String, Integer> c = countOps(out);
        assertEquals(n, c.get("negative"));
        assertEquals(2, c.get("nn.contrib_conv2d_NCHWc"));
        assertEquals(3, c.get("layout_transform"), "x in, the shared weight once, the result out");
    }

    /** A real network: squeezenet (light) from ONNX gives the same output after alter-op-layout (and fold-constant when registered). */
    @Test
    void squeezenetComputesTheSameAfterAlteringLayouts() throws Exception {
        checkModel("light_squeezenet", 20);
    }

    /** ResNet-50 and Inception v1: only with {@code -Plong} (each takes several seconds in the interpreter). */
    @Test
    void lightCnnsComputeTheSameAfterAlteringLayouts() throws Exception {
        assumeTrue(Boolean.getBoolean("relayfarm.long"), "long suite only");
        checkModel("light_resnet50", 50);
        checkModel("light_inception_v1", 20);
    }

    private static void checkModel(String name, int minAltered) throws Exception {
        Path file = Path.of("/work/shared/onnx/light/" + name + ".onnx");
        assumeTrue(Files.exists(file), name + " not present");
        IRModule m = OnnxImporter.importModel(file, ImportOptions.DEFAULT);
        Var input = m.main().orElseThrow().params().getFirst();
        if (!(input.annotation() instanceof TensorType t && t.isStatic())) {
            m = OnnxImporter.importModel(file, ImportOptions.DEFAULT.withInputShapes(Map.of(input.name(), List.of(1L, 3L, 224L, 224L))));
        }
        m = TypeInference.infer(m).module();
        String passes = PassRegistry.all().stream().anyMatch(p -> p.name().equals("fold-constant")) ? P + ",fold-constant" : P;
        long t0 = System.nanoTime();
        IRModule out = PassAssert.run(passes, m).module();
        long t1 = System.nanoTime();
        Map<String, Integer> before = countOps(m), after = countOps(out);
        assertTrue(after.getOrDefault("nn.contrib_conv2d_NCHWc", 0) >= minAltered, "convolutions altered: " + after);
        int[] dims = ((TensorType) m.main().orElseThrow().params().getFirst().annotation()).staticShape();
        NDArray x = NDArray.zeros(DType.FLOAT32, dims);
        java.util.Random rnd = new java.util.Random(3);
        for (int i = 0; i < x.size(); i++) x.setDouble(i, rnd.nextDouble());
        long t2 = System.nanoTime();
        NDArray want = ((TensorValue) Interpreter.runMain(m, x)).data();
        long t3 = System.nanoTime();
        NDArray got = ((TensorValue) Interpreter.runMain(out, x)).data();
        long t4 = System.nanoTime();
        new Tolerance(1e-4, 1e-5).compare(got, want).ifPresent(mm -> org.junit.jupiter.api.Assertions.fail(name + ": " + mm.message()));
        System.out.printf("alter-op-layout %-20s conv2d %3d -> %3d, NCHWc %3d, layout_transform %3d (%s), pass %5d ms, interpreter %6d -> %6d ms%n",
                name, before.getOrDefault("nn.conv2d", 0), after.getOrDefault("nn.conv2d", 0), after.getOrDefault("nn.contrib_conv2d_NCHWc", 0),
                after.getOrDefault("layout_transform", 0), passes, (t1 - t0) / 1_000_000, (t3 - t2) / 1_000_000, (t4 - t3) / 1_000_000);
    }

    static Map<String, Integer> countOps(IRModule m) {
        Map<String, Integer> n = new HashMap<>();
        for (Expr e : ExprTraversal.postOrder(m.lookup(new GlobalVar("main")))) {
            if (e instanceof Call c && c.callee() instanceof Op op) n.merge(op.name(), 1, Integer::sum);
        }
        return n;
    }
}
