package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** winograd-conv2d after alter-op-layout: which blocked convolutions it rewrites, to what, and that results stay. */
class WinogradConv2dTest {
    private static final String P = "alter-op-layout,winograd-conv2d";

    private static NDArray weight(int o, int i, int k, long seed) {
        Random rnd = new Random(seed);
        double[] v = new double[o * i * k * k];
        for (int j = 0; j < v.length; j++) v[j] = rnd.nextDouble() - 0.5;
        return NDArray.fromDoubles(DType.FLOAT32, new int[] {o, i, k, k}, v);
    }

    private static String conv(String shape, String attrs, NDArray w) {
        return """
                def @main(%x: Tensor[SHAPE, float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0]ATTRS);
                  nn.relu(%0)
                }
                """.replace("SHAPE", shape).replace("ATTRS", attrs) + MetaText.of(w);
    }

    @Test
    void rewritesA3x3StrideOneConvKeepingItsBlocks() {
        NDArray w = weight(32, 32, 3, 1);
        assertRewrites(P, conv("(1, 32, 10, 9)", ", padding=[1, 1]", w), """
                def @main(%x: Tensor[(1, 32, 10, 9), float32]) {
                  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
                  %1 = layout_transform(meta[relay.Constant][0], src_layout="OIHW", dst_layout="OIHW16i16o");
                  %2 = nn.contrib_conv2d_winograd_weight_transform(%1, tile_size=4, kernel_layout="OIHW16i16o");
                  %3 = nn.contrib_conv2d_winograd_NCHWc(%0, %2, tile_size=4, padding=[1, 1, 1, 1], channels=32, data_layout="NCHW16c", out_layout="NCHW16c");
                  %4 = nn.relu(%3);
                  layout_transform(%4, src_layout="NCHW16c", dst_layout="NCHW")
                }
                """ + MetaText.of(w));
    }

    /** A weight computed from constants only (fold-scale-axis's scaled weight, before fold-constant) qualifies too. */
    @Test
    void rewritesAWeightComputedFromConstants() {
        NDArray w = weight(32, 32, 3, 11), scale = weight(32, 1, 1, 12);
        String text = """
                def @main(%x: Tensor[(1, 32, 8, 8), float32]) {
                  nn.conv2d(%x, multiply(meta[relay.Constant][0], meta[relay.Constant][1]), padding=[1, 1])
                }
                """ + MetaText.of(w, scale);
        IRModule blocked = PassAssert.run("alter-op-layout", text).module();
        assertTrue(PassAssert.run("winograd-conv2d", blocked).changed());
    }

    @Test
    void leavesOtherConvolutionsAlone() {
        // stride 2, 16 channels, 1x1, an output under 7x7
        assertUnchangedAfterLayout(conv("(1, 32, 10, 10)", ", strides=[2, 2], padding=[1, 1]", weight(32, 32, 3, 2)));
        assertUnchangedAfterLayout(conv("(1, 16, 10, 10)", ", padding=[1, 1]", weight(16, 16, 3, 3)));
        assertUnchangedAfterLayout(conv("(1, 32, 10, 10)", "", weight(32, 32, 1, 4)));
        assertUnchangedAfterLayout(conv("(1, 32, 6, 6)", ", padding=[1, 1]", weight(32, 32, 3, 5)));
        // a weight that is a parameter: its transform could not be folded
        assertUnchangedAfterLayout("""
                def @main(%x: Tensor[(1, 32, 8, 8), float32], %w: Tensor[(32, 32, 3, 3), float32]) {
                  nn.conv2d(%x, %w, padding=[1, 1])
                }
                """);
    }

    private static void assertUnchangedAfterLayout(String text) {
        IRModule blocked = PassAssert.run("alter-op-layout", text).module();
        PassResult r = PassAssert.run("winograd-conv2d", blocked);
        assertFalse(r.changed(), () -> RelayPrinter.print(r.module()));
    }

    /** Folded and interpreted: the Winograd form computes the convolution (F(4x4) and F(2x2), padded or not, a ragged output). */
    @Test
    void foldedResultsMatchTheDirectConvolution() {
        for (int m : new int[] {2, 4}) {
            for (String attrs : new String[] {", padding=[1, 1]", ""}) {
                String text = "#[version = \"0.0.5\"]\n" + conv("(1, 32, 11, 9)", attrs, weight(48, 32, 3, 6));
                IRModule in = TypeInference.infer(RelayParser.parseModule(text, "input")).module();
                Sequential seq = PassRegistry.sequential("test", java.util.List.of("alter-op-layout", "winograd-conv2d", "fold-constant"));
                PassOptions options = PassOptions.level(3).withValidate(true);
                IRModule out = new Sequential("test", java.util.List.of(PassRegistry.get("alter-op-layout"), new WinogradConv2d(new WinogradConv2d.Options(true, m, 32, 7, 16L << 20)),
                        PassRegistry.get("fold-constant"))).run(in, new PassContext(options)).module();
                String printed = RelayPrinter.print(out);
                assertTrue(printed.contains("nn.contrib_conv2d_winograd_NCHWc") && !printed.contains("weight_transform"), printed);
                for (long seed = 1; seed <= 2; seed++) SameResults.assertSameResults(in, out, seed, new Tolerance(1e-4, 1e-4));
                assertTrue(seq.passes().size() >= 3);
            }
        }
    }

    /** On at -O3; off when the pass is disabled, or with options that turn it off unless forced. */
    @Test
    void onByDefaultOffWhenDisabled() {
        String text = "#[version = \"0.0.5\"]\n" + conv("(1, 32, 8, 8)", ", padding=[1, 1]", weight(32, 32, 3, 7));
        IRModule in = TypeInference.infer(RelayParser.parseModule(text, "input")).module();
        String plain = RelayPrinter.print(OptPipeline.build().run(in, new PassContext(PassOptions.level(3))).module());
        assertTrue(plain.contains("nn.contrib_conv2d_winograd_NCHWc"), plain);
        String disabled = RelayPrinter.print(OptPipeline.build().run(in, new PassContext(PassOptions.level(3).withDisabled(java.util.Set.of(WinogradConv2d.NAME)))).module());
        assertFalse(disabled.contains("winograd"), disabled);
        IRModule blocked = PassAssert.run("alter-op-layout", text).module();
        Sequential off = new Sequential("off", java.util.List.of(new WinogradConv2d(WinogradConv2d.Options.enabled(false))));
        assertFalse(off.run(blocked, new PassContext(PassOptions.level(3))).changed());
        assertTrue(off.run(blocked, new PassContext(PassOptions.level(3).withForced(java.util.Set.of(WinogradConv2d.NAME)))).changed());
    }

    /** The transformed input of a large map with few channels would spill the cache: 224x224 with 64 channels stays direct, 112x112 with 128 does not. */
    @Test
    void leavesConvolutionsWhoseTransformsSpillTheCache() {
        assertUnchangedAfterLayout(conv("(1, 64, 224, 224)", ", padding=[1, 1]", weight(64, 64, 3, 8)));
        IRModule blocked = PassAssert.run("alter-op-layout", conv("(1, 128, 112, 112)", ", padding=[1, 1]", weight(128, 128, 3, 9))).module();
        assertTrue(PassAssert.run("winograd-conv2d", blocked).changed());
    }
}
