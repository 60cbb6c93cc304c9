package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ConfigSpace;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.runtime.KernelLibrary;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * EVERY configuration of the tunable spaces of the templates that carry the CNNs' time, for small
 * workloads with the forms real models give them (NCHWc 1x1 and 3x3 convolutions with and without
 * padding, stride 2, an epilogue or the anchor alone, a prime width; a batched dense), is either rejected by its
 * template with an {@link InvalidConfigException} before lowering, or lowers, compiles and computes
 * what the interpreter computes. A tuner measures any point of a space; one that silently computed a
 * wrong answer would only be caught by the runner's output check, after costing a trial.
 */
class WholeSpaceLoweringTest {
    private record Case(String label, Function fn, ScheduleConfig config) {}

    /** Groups by name, the space each was lowered over, and every (config, kernel) case. */
    private static final Map<String, String> GROUPS = new LinkedHashMap<>();
    private static final Map<String, ConfigSpace> SPACES = new LinkedHashMap<>();
    private static final Map<String, Case> CASES = new LinkedHashMap<>();
    private static final Map<String, Integer> REJECTED = new TreeMap<>();
    private static KernelLibrary lib;

    static {
        // squeezenet's fire 1x1 (bias, ReLU) with a 4x6 output: reg_h {1,2,4} x reg_n {1,2,3,6}, one 8-lane vector per column
        GROUPS.put("nchwc_1x1_bias_relu", """
                fn (%x: Tensor[(1, 2, 4, 6, 8), float32], %w: Tensor[(2, 2, 1, 1, 8, 8), float32], %b: Tensor[(1, 2, 1, 1, 8), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, channels=16, kernel_size=[1, 1], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // a padded 3x3 on a prime 5x5 map with 16-channel output blocks (oc_vec 8 or 16): the squeezenet 13x13 form
        GROUPS.put("nchwc_3x3_pad_prime", """
                fn (%x: Tensor[(1, 1, 5, 5, 8), float32], %w: Tensor[(1, 1, 3, 3, 8, 16), float32], %b: Tensor[(1, 1, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i16o", out_layout="NCHW16c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // resnet's stride-2 3x3 without padding, the anchor alone (its tile goes through a cache_write copy)
        GROUPS.put("nchwc_3x3_stride2_alone", """
                fn (%x: Tensor[(1, 2, 9, 9, 8), float32], %w: Tensor[(1, 2, 3, 3, 8, 8), float32], Primitive=1) {
                  nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], channels=8, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c")
                }""");
        // a depthwise 3x3, stride 2, padded, 16-channel blocks (two vectors per column) with bias and ReLU: mobilenet's downsampling form
        GROUPS.put("depthwise_3x3_stride2_bias_relu", """
                fn (%x: Tensor[(1, 2, 9, 12, 16), float32], %w: Tensor[(2, 1, 3, 3, 1, 16), float32], %b: Tensor[(1, 2, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=32, channels=32, kernel_size=[3, 3], data_layout="NCHW16c", kernel_layout="OIHW1i16o", out_layout="NCHW16c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // a depthwise 5x5 (ppocr's), stride 1, padding 2 on a prime 7-wide map, 8-channel blocks, the anchor alone
        GROUPS.put("depthwise_5x5_pad_prime_alone", """
                fn (%x: Tensor[(1, 3, 6, 7, 8), float32], %w: Tensor[(3, 1, 5, 5, 1, 8), float32], Primitive=1) {
                  nn.contrib_conv2d_NCHWc(%x, %w, padding=[2, 2, 2, 2], groups=24, channels=24, kernel_size=[5, 5], data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c")
                }""");
        // a grouped 1x1 (shufflenet's: 4 groups of 8 channels in 4-lane blocks, two chunks a group) with bias and ReLU
        GROUPS.put("grouped_1x1_bias_relu", """
                fn (%x: Tensor[(1, 8, 2, 3, 4), float32], %w: Tensor[(8, 2, 1, 1, 4, 4), float32], %b: Tensor[(1, 8, 1, 1, 4), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, groups=4, channels=32, kernel_size=[1, 1], data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW4c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // a first layer: its 3 input channels are one block (NCHW3c), 16-channel output blocks, stride 2, padded, bias and ReLU
        GROUPS.put("nchw3c_first_layer", """
                fn (%x: Tensor[(1, 1, 4, 10, 3), float32], %w: Tensor[(1, 1, 3, 3, 3, 16), float32], %b: Tensor[(1, 1, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3], data_layout="NCHW3c", kernel_layout="OIHW3i16o", out_layout="NCHW16c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // Winograd F(4x4, 3x3), padded, a 6x7 output (m divides neither side: 2x2 tiles cropped), 8-lane input and
        // 16-lane output blocks, bias and ReLU in the output transform's loops
        GROUPS.put("winograd_f4_pad_bias_relu", """
                fn (%x: Tensor[(1, 2, 6, 7, 8), float32], %u: Tensor[(6, 6, 1, 2, 8, 16), float32], %b: Tensor[(1, 1, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_winograd_NCHWc(%x, %u, tile_size=4, padding=[1, 1, 1, 1], channels=16, data_layout="NCHW8c", out_layout="NCHW16c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""");
        // Winograd F(2x2, 3x3) unpadded on a 7x7 map (a 5x5 output, 3x3 tiles), the anchor alone
        GROUPS.put("winograd_f2_alone", """
                fn (%x: Tensor[(1, 1, 7, 7, 8), float32], %u: Tensor[(4, 4, 1, 1, 8, 8), float32], Primitive=1) {
                  nn.contrib_conv2d_winograd_NCHWc(%x, %u, tile_size=2, channels=8, data_layout="NCHW8c", out_layout="NCHW8c")
                }""");
        // a batched dense (dense_pack: batch above 4) with a bias epilogue and a column count no packing block divides
        GROUPS.put("dense_pack_bias", """
                fn (%x: Tensor[(8, 32), float32], %w: Tensor[(20, 32), float32], %b: Tensor[(20), float32], Primitive=1) {
                  %0 = nn.dense(%x, %w, units=20);
                  add(%0, %b)
                }""");
    }

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        List<LoweredFunc> funcs = new ArrayList<>();
        for (Map.Entry<String, String> g : GROUPS.entrySet()) {
            Function fn = PrimitiveLoweringTest.parse(g.getValue());
            KernelPlan plan = PrimitiveLowering.plan(fn, g.getKey(), Target.host());
            SPACES.put(g.getKey(), plan.space());
            for (long i = 0; i < plan.space().size(); i++) {
                ScheduleConfig c = plan.space().get(i);
                String name = g.getKey() + "_" + i;
                try {
                    LoweredKernel k = PrimitiveLowering.lower(PrimitiveLoweringTest.parse(g.getValue()), name, Target.host(), Optional.of(c));
                    funcs.add(k.func());
                    CASES.put(name, new Case(g.getKey() + " " + c.toJson(), fn, c));
                } catch (InvalidConfigException e) {
                    REJECTED.merge(g.getKey(), 1, Integer::sum);
                }
            }
        }
        lib = KernelLibrary.build(new CModule(funcs), CCompiler.host().orElseThrow());
    }

    @AfterAll
    static void close() {
        if (lib != null) lib.close();
    }

    @Test
    void everyConfigThatLowersMatchesTheInterpreter() {
        long seed = 1;
        for (Map.Entry<String, Case> e : CASES.entrySet()) {
            GroupCheck.assertMatches(e.getValue().label(), e.getValue().fn(), lib.kernel(e.getKey()), seed++);
        }
    }

    @Test
    void theSpacesAreWideAndMostlyValid() {
        // conv2d_NCHWc: reg_n x oc_vec x unroll_kw x order, then the optional reg_h x tile_order x unroll_ic
        assertEquals(4 * 1 * 2 * 2 * 3 * 2 * 2, SPACES.get("nchwc_1x1_bias_relu").size());
        assertEquals(2 * 2 * 2 * 2 * 2 * 2 * 2, SPACES.get("nchwc_3x3_pad_prime").size());
        assertEquals(3 * 1 * 2 * 2 * 3 * 2 * 2, SPACES.get("nchwc_3x3_stride2_alone").size());
        // grouped conv2d_NCHWc: reg_n {1,3} x oc_vec {4} x unroll_kw x order x reg_h {1,2} x tile_order x unroll_ic
        assertEquals(2 * 1 * 2 * 2 * 2 * 2 * 2, SPACES.get("grouped_1x1_bias_relu").size());
        // the first layer: reg_n {1,5} x oc_vec {8,16} x unroll_kw x order x reg_h {1,2} x tile_order x unroll_ic
        assertEquals(2 * 2 * 2 * 2 * 2 * 2 * 2, SPACES.get("nchw3c_first_layer").size());
        // depthwise: reg_n (divisors of the output width 6, then 7) x unroll_kw x unroll_kh, then the optional reg_h
        // (divisors of the output height 5, then 6, up to 4)
        assertEquals(4 * 2 * 2 * 1, SPACES.get("depthwise_3x3_stride2_bias_relu").size());
        assertEquals(2 * 2 * 2 * 3, SPACES.get("depthwise_5x5_pad_prime_alone").size());
        // winograd: reg_n (divisors of the tile count: 4, then 9) x oc_vec ({8, 16}, then {8}) x gemm_order
        assertEquals(3 * 2 * 2, SPACES.get("winograd_f4_pad_bias_relu").size());
        assertEquals(3 * 1 * 2, SPACES.get("winograd_f2_alone").size());
        // dense_pack: tile_y {1,2,4,8} x tile_x {8,16} (20 columns) x tile_k {1,2,4,8,16}, then the optional tile_order {rows, cols}
        assertEquals(4 * 2 * 5 * 2, SPACES.get("dense_pack_bias").size());
        // refused: 5 rows x 5 columns x 2 vectors (oc_vec 16) on the prime map, past the register file (with any unroll_kw,
        // order, tile_order, unroll_ic); the 8-lane groups' largest tiles (4 x 6, 4 x 4) fit, and no unrolled channel block
        // reaches the compile-time cap (at most 5 x 5 x 8 x 3 = 600 FMAs)
        assertEquals(Map.of("nchwc_3x3_pad_prime", 2 * 2 * 2 * 2), REJECTED, "configs refused before lowering");
        long lowered = SPACES.values().stream().mapToLong(ConfigSpace::size).sum() - REJECTED.values().stream().mapToInt(Integer::intValue).sum();
        assertEquals(lowered, CASES.size());
        assertTrue(CASES.values().stream().anyMatch(c -> c.config().knobs().containsKey("reg_h")), "multi-row tiles were lowered");
        assertTrue(CASES.values().stream().anyMatch(c -> c.config().template().startsWith("depthwise") && c.config().knobs().containsKey("reg_h")),
                "multi-row depthwise tiles were lowered");
    }
}
