package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import org.junit.jupiter.api.Test;

/**
 * The configuration a width kernel runs each residue class with: the template's default at a large size whose tiles
 * every size of the class can take (not the small samples' defaults), budgeted for the target's registers. Correctness
 * at every residue is DynamicWidthTest's; this checks the choice, which decides the speed.
 */
class WidthKernelConfigTest {
    private static final Target AVX512 = Target.parse("c -mcpu=x86-64-v4"), AVX2 = Target.parse("c -mcpu=x86-64-v3");

    /** PP-OCRv4's depthwise 5x5 over 12 rows of a dynamic width, 16-channel blocks. */
    private static final Function DEPTHWISE = PrimitiveLoweringTest.parse("""
            fn (%x: Tensor[(1, 2, 12, ?, 16), float32], %w: Tensor[(2, 1, 5, 5, 1, 16), float32], Primitive=1) {
              nn.contrib_conv2d_NCHWc(%x, %w, padding=[2, 2, 2, 2], groups=32, channels=32, kernel_size=[5, 5], data_layout="NCHW16c", kernel_layout="OIHW1i16o", out_layout="NCHW16c")
            }""");

    @Test
    void aDepthwiseTileHasEnoughAccumulatorsInEveryClassItCan() {
        // widths 8t: 8 columns, one AVX-512 register each
        ScheduleConfig wide = WidthKernels.configOf(DEPTHWISE, "dw", AVX512, 0);
        assertEquals(8, wide.getInt("reg_n"));
        assertFalse(wide.knobs().containsKey("reg_h"), wide.toString());
        // widths 8t + 4: 4 columns divide them all; two rows make the 8 accumulators
        ScheduleConfig four = WidthKernels.configOf(DEPTHWISE, "dw", AVX512, 4);
        assertEquals(4, four.getInt("reg_n"));
        assertEquals(2, four.getInt("reg_h"));
        // odd widths: one column, four rows (the most a tile spans)
        ScheduleConfig odd = WidthKernels.configOf(DEPTHWISE, "dw", AVX512, 3);
        assertEquals(1, odd.getInt("reg_n"));
        assertEquals(4, odd.getInt("reg_h"));
        // on AVX2 a 16-channel column is two registers: 4 columns are already 8 accumulators
        ScheduleConfig avx2 = WidthKernels.configOf(DEPTHWISE, "dw", AVX2, 4);
        assertEquals(4, avx2.getInt("reg_n"));
        assertFalse(avx2.knobs().containsKey("reg_h"), avx2.toString());
    }

    @Test
    void aLoopThatLargeSizesRunOnThreadsIsParallel() {
        // at the samples (widths up to 71) this is under the injective template's 16384 elements, serial by default
        Function add = PrimitiveLoweringTest.parse("""
                fn (%x: Tensor[(1, 16, 12, ?), float32], Primitive=1) {
                  add(%x, %x)
                }""");
        assertEquals(1, WidthKernels.configOf(add, "add", AVX512, 0).getInt("parallel"));
        assertEquals(1, WidthKernels.configOf(add, "add", AVX512, 5).getInt("parallel"));
    }
}
