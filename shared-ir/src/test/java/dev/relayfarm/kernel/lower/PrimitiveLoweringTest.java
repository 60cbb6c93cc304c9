package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.StmtPrinter;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.text.RelayParser;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fused groups written as Relay text (the shapes FuseOps makes after alter-op-layout: NCHWc
 * convolutions with bias/ReLU/residual epilogues, plain NCHW convolutions, dense, injective groups,
 * tuple parameters and results), each lowered to one kernel, all compiled in one module and compared
 * with the interpreter running the same Primitive function.
 */
class PrimitiveLoweringTest {
    private record Case(Function fn, LoweredKernel kernel) {}

    private static final Map<String, Case> CASES = new LinkedHashMap<>();
    private static KernelLibrary lib;

    static Function parse(String text) {
        return (Function) RelayParser.parseExpr(text);
    }

    private static LoweredKernel add(String name, String text, Optional<ScheduleConfig> config) {
        Function fn = parse(text);
        LoweredKernel k = PrimitiveLowering.lower(fn, name, Target.host(), config);
        CASES.put(name, new Case(fn, k));
        return k;
    }

    static final String NCHWC_1X1 = """
            fn (%x: Tensor[(1, 2, 6, 6, 8), float32], %w: Tensor[(2, 2, 1, 1, 8, 8), float32], %b: Tensor[(1, 2, 1, 1, 8), float32], Primitive=1) {
              %0 = nn.contrib_conv2d_NCHWc(%x, %w, channels=16, kernel_size=[1, 1], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c");
              %1 = add(%0, %b);
              nn.relu(%1)
            }""";

    static final String NCHWC_3X3 = """
            fn (%x: Tensor[(1, 2, 7, 7, 8), float32], %w: Tensor[(2, 2, 3, 3, 8, 16), float32], %b: Tensor[(1, 2, 1, 1, 16), float32], Primitive=1) {
              %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i16o", out_layout="NCHW16c");
              %1 = add(%0, %b);
              nn.relu(%1)
            }""";

    /** A first layer: 3 input channels, 7x7 stride 2 padded (resnet's shape, smaller), bias and ReLU. */
    static final String CONV_7X7 = """
            fn (%x: Tensor[(1, 3, 20, 19), float32], %w: Tensor[(16, 3, 7, 7), float32], %b: Tensor[(16, 1, 1), float32], Primitive=1) {
              %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], channels=16, kernel_size=[7, 7]);
              %1 = add(%0, %b);
              nn.relu(%1)
            }""";

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        add("nchwc_1x1_bias_relu", NCHWC_1X1, Optional.empty());
        add("nchwc_3x3_pad_bias_relu", NCHWC_3X3, Optional.empty());
        add("nchwc_3x3_tuned", NCHWC_3X3, Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHWc.x86\",\"knobs\":{\"ic_bn\":8,\"oc_bn\":16,\"oc_vec\":16,\"reg_n\":1,\"unroll_kw\":0,\"order\":\"kh_kw_ic\"}}")));
        add("nchwc_3x3_half_block", NCHWC_3X3, Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHWc.x86\",\"knobs\":{\"ic_bn\":8,\"oc_bn\":16,\"oc_vec\":8,\"reg_n\":7,\"unroll_kw\":1,\"order\":\"ic_kh_kw\"}}")));
        add("nchwc_prime_width_bias_relu", """
                fn (%x: Tensor[(1, 1, 13, 13, 8), float32], %w: Tensor[(2, 1, 3, 3, 8, 16), float32], %b: Tensor[(1, 2, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i16o", out_layout="NCHW16c");
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""", Optional.empty());
        add("nchwc_stride2_residual", """
                fn (%x: Tensor[(1, 1, 9, 9, 8), float32], %w: Tensor[(1, 1, 3, 3, 8, 8), float32], %b: Tensor[(1, 1, 1, 1, 8), float32],
                    %r: Tensor[(1, 1, 4, 4, 8), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], channels=8, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c");
                  %1 = add(%0, %b);
                  %2 = add(%1, %r);
                  nn.relu(%2)
                }""", Optional.empty());
        // a softmax over an axis of one: its maximum has the output's shape, and the sum (computed first) reads it
        add("softmax_over_a_unit_axis", """
                fn (%x: Tensor[(1, 4), float32], Primitive=1) {
                  nn.softmax(%x, axis=0)
                }""", Optional.empty());
        add("softmax_over_a_unit_middle_axis", """
                fn (%x: Tensor[(2, 1, 3), float32], Primitive=1) {
                  nn.softmax(%x, axis=1)
                }""", Optional.empty());
        add("nchwc_plain", """
                fn (%x: Tensor[(1, 1, 5, 5, 8), float32], %w: Tensor[(1, 1, 3, 3, 8, 8), float32], Primitive=1) {
                  nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c")
                }""", Optional.empty());
        add("conv_nchw_stride2_bias_relu", """
                fn (%x: Tensor[(1, 3, 15, 15), float32], %w: Tensor[(8, 3, 3, 3), float32], %b: Tensor[(8, 1, 1), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], channels=8, kernel_size=[3, 3]);
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""", Optional.empty());
        add("conv_nchw_columns_configured", """
                fn (%x: Tensor[(1, 3, 15, 15), float32], %w: Tensor[(8, 3, 3, 3), float32], Primitive=1) {
                  nn.conv2d(%x, %w, strides=[2, 2], channels=8, kernel_size=[3, 3])
                }""", Optional.of(ScheduleConfig.fromJson("{\"template\":\"conv2d_NCHW.x86\",\"knobs\":{\"oc_bn\":8,\"reg_n\":7,\"unroll_kw\":1,\"order\":\"rc_ry_rx\"}}")));
        add("conv_nchw_ocvec_7x7_pad_bias_relu", CONV_7X7, Optional.empty());
        add("conv_nchw_ocvec_two_chunks", CONV_7X7, Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHW_ocvec.x86\",\"knobs\":{\"oc_bn\":8,\"unroll_kw\":0,\"order\":\"ry_rx_rc\"}}")));
        add("conv_nchw_bias_clip", """
                fn (%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 4, 3, 3), float32], %b: Tensor[(6), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=6, kernel_size=[3, 3]);
                  %1 = nn.bias_add(%0, %b);
                  clip(%1, a_min=0f, a_max=6f)
                }""", Optional.empty());
        add("conv_grouped_bias_relu", """
                fn (%x: Tensor[(1, 8, 9, 9), float32], %w: Tensor[(12, 2, 1, 1), float32], %b: Tensor[(12, 1, 1), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, groups=4, channels=12, kernel_size=[1, 1]);
                  %1 = add(%0, %b);
                  nn.relu(%1)
                }""", Optional.empty());
        add("conv_depthwise_stride2_pad", """
                fn (%x: Tensor[(1, 6, 11, 11), float32], %w: Tensor[(6, 1, 3, 3), float32], %b: Tensor[(6, 1, 1), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=6, channels=6, kernel_size=[3, 3]);
                  add(%0, %b)
                }""", Optional.empty());
        // FuseOps puts ShuffleNet's channel shuffle (and a change of block, 8 to 4 lanes) into the depthwise padding stage
        add("depthwise_after_channel_shuffle", """
                fn (%x: Tensor[(1, 2, 5, 5, 8), float32], %w: Tensor[(4, 1, 3, 3, 1, 4), float32], %b: Tensor[(1, 4, 1, 1, 4), float32], Primitive=1) {
                  %0 = layout_transform(%x, src_layout="NCHW8c", dst_layout="NCHW");
                  %1 = reshape(%0, newshape=[1, 4, 4, 5, 5]);
                  %2 = transpose(%1, axes=[0, 2, 1, 3, 4]);
                  %3 = reshape(%2, newshape=[1, 16, 5, 5]);
                  %4 = layout_transform(%3, src_layout="NCHW", dst_layout="NCHW4c");
                  %5 = nn.contrib_conv2d_NCHWc(%4, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=16, channels=16, kernel_size=[3, 3], data_layout="NCHW4c", kernel_layout="OIHW1i4o", out_layout="NCHW4c");
                  add(%5, %b)
                }""", Optional.empty());
        add("dense_nopack_bias_relu", """
                fn (%x: Tensor[(1, 64), float32], %w: Tensor[(24, 64), float32], %b: Tensor[(24), float32], Primitive=1) {
                  %0 = nn.dense(%x, %w, units=24);
                  %1 = nn.bias_add(%0, %b);
                  nn.relu(%1)
                }""", Optional.empty());
        add("dense_nopack_alone", """
                fn (%x: Tensor[(2, 20), float32], %w: Tensor[(10, 20), float32], Primitive=1) {
                  nn.dense(%x, %w, units=10)
                }""", Optional.empty());
        add("dense_pack_bias", """
                fn (%x: Tensor[(8, 32), float32], %w: Tensor[(20, 32), float32], %b: Tensor[(20), float32], Primitive=1) {
                  %0 = nn.dense(%x, %w, units=20);
                  add(%0, %b)
                }""", Optional.empty());
        add("dense_pack_configured", """
                fn (%x: Tensor[(2, 20), float32], %w: Tensor[(40, 20), float32], Primitive=1) {
                  nn.dense(%x, %w, units=40)
                }""", Optional.of(ScheduleConfig.fromJson("{\"template\":\"dense_pack.x86\",\"knobs\":{\"tile_y\":2,\"tile_x\":8,\"tile_k\":4}}")));
        // quantize-realize's convolutions: 8-bit data, int8 weights, int32 accumulation, requantized by a fixed-point
        // multiplier and shift back to 8 bits; the dot-product template in both loop orders, and the NCHW template
        String int8Epilogue = """
                  %1 = add(%0, %b);
                  %2 = cast(%1, dtype="int64");
                  %3 = multiply(%2, 1518500250i64);
                  %4 = add(%3, 137438953472i64);
                  %5 = right_shift(%4, 38i64);
                  %6 = clip(%5, a_min=0f, a_max=255f);
                  cast(%6, dtype="uint8")
                }""";
        String int8Conv = """
                fn (%x: Tensor[(1, 5, 9, 9), uint8], %w: Tensor[(7, 5, 3, 3), int8], %b: Tensor[(7, 1, 1), int32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=7, kernel_size=[3, 3], out_dtype="int32");
                """ + int8Epilogue;
        add("conv_int8_dot_requantize", int8Conv, Optional.of(ScheduleConfig.fromJson("{\"template\":\"conv2d_NCHW_int8_dot.x86\",\"knobs\":{\"order\":\"f_p\"}}")));
        add("conv_int8_dot_pixels_outer", int8Conv, Optional.of(ScheduleConfig.fromJson("{\"template\":\"conv2d_NCHW_int8_dot.x86\",\"knobs\":{\"order\":\"p_f\"}}")));
        add("conv_int8_nchw_requantize", int8Conv, Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHW.x86\",\"knobs\":{\"oc_bn\":7,\"reg_n\":5,\"unroll_kw\":0,\"order\":\"rc_ry_rx\"}}")));
        // a reduction of 5·3·3 = 45 bytes is shorter than a vector of them: the NCHW template by default
        add("conv_int8_short_reduction_default", int8Conv, Optional.empty());
        // uint8 data and a reduction of 8·3·3 = 72: the dot-product template by default
        add("conv_uint8_long_reduction_default", """
                fn (%x: Tensor[(1, 8, 7, 6), uint8], %w: Tensor[(5, 8, 3, 3), int8], Primitive=1) {
                  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=5, kernel_size=[3, 3], out_dtype="int32")
                }""", Optional.empty());
        String signedDilated = """
                fn (%x: Tensor[(2, 3, 10, 11), int8], %w: Tensor[(4, 3, 3, 2), int8], Primitive=1) {
                  nn.conv2d(%x, %w, strides=[2, 1], padding=[2, 1, 0, 3], dilation=[2, 3], channels=4, kernel_size=[3, 2], out_dtype="int32")
                }""";
        add("conv_int8_signed_dilated", signedDilated, Optional.empty());
        // signed data and a reduction of 32·3·3 = 288: the dot-product template by default
        add("conv_int8_long_reduction_default", """
                fn (%x: Tensor[(1, 32, 5, 6), int8], %w: Tensor[(4, 32, 3, 3), int8], Primitive=1) {
                  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3], out_dtype="int32")
                }""", Optional.empty());
        add("conv_int8_signed_dilated_dot", signedDilated, Optional.of(ScheduleConfig.fromJson("{\"template\":\"conv2d_NCHW_int8_dot.x86\",\"knobs\":{\"order\":\"f_p\"}}")));
        // int8 depthwise convolutions (MobileNet's, quantized): the NCHW template over the data widened to int32 in the
        // padding stage; unsigned and signed data, padding, stride 2, a 5x5 window, a row wider than one 32-column tile
        add("depthwise_uint8_stride2_pad_requantize", """
                fn (%x: Tensor[(1, 6, 11, 13), uint8], %w: Tensor[(6, 1, 3, 3), int8], %b: Tensor[(6, 1, 1), int32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=6, channels=6, kernel_size=[3, 3], out_dtype="int32");
                """ + int8Epilogue, Optional.empty());
        add("depthwise_int8_5x5_pad", """
                fn (%x: Tensor[(1, 4, 5, 70), int8], %w: Tensor[(4, 1, 5, 5), int8], Primitive=1) {
                  nn.conv2d(%x, %w, padding=[2, 2, 2, 2], groups=4, channels=4, kernel_size=[5, 5], out_dtype="int32")
                }""", Optional.empty());
        add("depthwise_int8_stride2_pad_float_epilogue", """
                fn (%x: Tensor[(1, 8, 12, 96), int8], %w: Tensor[(8, 1, 3, 3), int8], %s: Tensor[(8, 1, 1), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=8, channels=8, kernel_size=[3, 3], out_dtype="int32");
                  %1 = cast(%0, dtype="float32");
                  %2 = multiply(%1, %s);
                  %3 = divide(%2, 0.05f);
                  %4 = round(%3);
                  %5 = clip(%4, a_min=-127f, a_max=127f);
                  cast(%5, dtype="int8")
                }""", Optional.empty());
        // an unpadded 1x1 convolution on signed data (after a hard-swish): the widening stage without padding
        add("conv_int8_1x1_unpadded", """
                fn (%x: Tensor[(1, 16, 3, 96), int8], %w: Tensor[(24, 16, 1, 1), int8], Primitive=1) {
                  nn.conv2d(%x, %w, channels=24, kernel_size=[1, 1], out_dtype="int32")
                }""", Optional.empty());
        // quantize-realize's squeeze-and-excitation pools: a float NCHW global average pool quantized to int8 (8 channel
        // sums side by side), one without an epilogue, and one whose channels do not come in eights (one sum at a time)
        add("global_avg_pool_quantized", """
                fn (%x: Tensor[(1, 16, 3, 96), float32], Primitive=1) {
                  %0 = nn.global_avg_pool2d(%x);
                  %1 = divide(%0, 0.02f);
                  %2 = round(%1);
                  %3 = clip(%2, a_min=-127f, a_max=127f);
                  cast(%3, dtype="int8")
                }""", Optional.empty());
        add("global_avg_pool_alone", """
                fn (%x: Tensor[(2, 24, 5, 7), float32], Primitive=1) {
                  nn.global_avg_pool2d(%x)
                }""", Optional.empty());
        add("global_avg_pool_odd_channels", """
                fn (%x: Tensor[(1, 12, 4, 9), float32], Primitive=1) {
                  nn.global_avg_pool2d(%x)
                }""", Optional.empty());
        add("injective_broadcast", """
                fn (%x: Tensor[(2, 3, 5, 16), float32], %y: Tensor[(3, 1, 1), float32], Primitive=1) {
                  %0 = add(%x, %y);
                  %1 = multiply(%0, 0.5f);
                  nn.relu(%1)
                }""", Optional.empty());
        add("tuple_param_and_result", """
                fn (%t: (Tensor[(4, 9), float32], Tensor[(4, 9), float32]), Primitive=1) {
                  %0 = add(%t.0, %t.1);
                  (exp(%0), %t.1, sigmoid(%0))
                }""", Optional.empty());
        List<LoweredFunc> funcs = new ArrayList<>();
        for (Case c : CASES.values()) funcs.add(c.kernel().func());
        lib = KernelLibrary.build(new CModule(funcs), CCompiler.host().orElseThrow());
    }

    @AfterAll
    static void close() {
        if (lib != null) lib.close();
    }

    @Test
    void everyGroupMatchesTheInterpreter() {
        long seed = 1;
        for (Map.Entry<String, Case> e : CASES.entrySet()) {
            GroupCheck.assertMatches(e.getKey(), e.getValue().fn(), lib.kernel(e.getKey()), seed++);
        }
    }

    @Test
    void epilogueIsFusedIntoTheConvolutionTile() {
        String loops = StmtPrinter.print(CASES.get("nchwc_3x3_pad_bias_relu").kernel().func().body());
        // the convolution lives only in a local tile; bias and relu are applied where the tile is read
        assertTrue(loops.contains("allocate conv2d_NCHWc") && loops.contains(" local"), loops);
        assertFalse(loops.contains("allocate add"), loops);
        assertFalse(loops.contains("allocate conv2d_NCHWc[1, 2, 7, 7, 16] global"), loops);
    }

    @Test
    void eightBitDataIsWidenedOnceBeforeTheTile() {
        String loops = StmtPrinter.print(CASES.get("conv_int8_1x1_unpadded").kernel().func().body());
        // the data is cast to int32 in its own stage, once per element; the tile multiplies int32 by a widened weight
        // (int8 loads in the tile's loop would make the C compiler's vectors 16 bytes: a quarter of the int32 lanes)
        assertTrue(loops.contains("allocate conv2d_pad[1, 16, 3, 96] global"), loops);
        assertTrue(loops.contains("conv2d_pad[0, pn_pc_f, ph, pw] = int32(p0[0, pn_pc_f, ph, pw])"), loops);
        assertEquals(1, loops.split("int32\\(p0\\[", -1).length - 1, loops);
        assertTrue(loops.contains("(conv2d_pad[0, rc, "), loops);
    }

    @Test
    void signatureFlattensTupleParametersThenOutputs() {
        LoweredKernel k = CASES.get("tuple_param_and_result").kernel();
        assertEquals(2, k.signature().numInputs());
        assertEquals(5, k.signature().params().size());
        assertEquals(List.of(4, 9), k.signature().params().get(4).shape());
    }

    @Test
    void workloadAndConfigAreRecorded() {
        LoweredKernel k = CASES.get("nchwc_1x1_bias_relu").kernel();
        assertEquals("conv2d_NCHWc.x86", k.config().template());
        assertEquals("nn.contrib_conv2d_NCHWc(data[1,2,6,6,8],weight[2,2,1,1,8,8],strides=1x1,padding=0,0,0,0,dilation=1x1)", k.workload());
        assertEquals(6, k.config().getInt("reg_n"));
        assertEquals(1, CASES.get("nchwc_3x3_tuned").kernel().config().getInt("reg_n"));
        // a prime width 13 with 16-channel blocks: 13 columns x 8 channels per register tile
        assertEquals(13, CASES.get("nchwc_prime_width_bias_relu").kernel().config().getInt("reg_n"));
        assertEquals(8, CASES.get("nchwc_prime_width_bias_relu").kernel().config().getInt("oc_vec"));
        assertEquals("dense_nopack.x86", CASES.get("dense_nopack_bias_relu").kernel().config().template());
        assertEquals("dense_pack.x86", CASES.get("dense_pack_bias").kernel().config().template());
        assertEquals("injective.x86", CASES.get("injective_broadcast").kernel().config().template());
        // NCHW global pools: eight channel sums in flight when the channels come in eights
        assertEquals(8, CASES.get("global_avg_pool_quantized").kernel().config().getInt("channel_lanes"));
        assertEquals(8, CASES.get("global_avg_pool_alone").kernel().config().getInt("channel_lanes"));
        assertFalse(CASES.get("global_avg_pool_odd_channels").kernel().config().knobs().containsKey("channel_lanes"));
        // 3 input channels: output channels as SIMD lanes, all 16 in one tile; 6 output channels do not fill a vector
        assertEquals("conv2d_NCHW_ocvec.x86", CASES.get("conv_nchw_stride2_bias_relu").kernel().config().template());
        assertEquals(16, CASES.get("conv_nchw_ocvec_7x7_pad_bias_relu").kernel().config().getInt("oc_bn"));
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_nchw_bias_clip").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_nchw_columns_configured").kernel().config().template());
        // grouped and depthwise convolutions: the NCHW template, groups in the workload
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_grouped_bias_relu").kernel().config().template());
        assertEquals("nn.conv2d(data[1,6,11,11],weight[6,1,3,3],strides=2x2,padding=1,1,1,1,dilation=1x1,groups=6)",
                CASES.get("conv_depthwise_stride2_pad").kernel().workload());
        // 8-bit convolutions: dot products of unfolded rows for a reduction of at least 64 (uint8 data) or 256 (int8),
        // otherwise (short reductions, depthwise) the NCHW template, unless configured otherwise
        assertEquals("conv2d_NCHW_int8_dot.x86", CASES.get("conv_uint8_long_reduction_default").kernel().config().template());
        assertEquals("conv2d_NCHW_int8_dot.x86", CASES.get("conv_int8_long_reduction_default").kernel().config().template());
        assertEquals("conv2d_NCHW_int8_dot.x86", CASES.get("conv_int8_dot_requantize").kernel().config().template());
        assertEquals("conv2d_NCHW_int8_dot.x86", CASES.get("conv_int8_signed_dilated_dot").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_int8_short_reduction_default").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_int8_signed_dilated").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_int8_nchw_requantize").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("depthwise_uint8_stride2_pad_requantize").kernel().config().template());
        assertEquals("conv2d_NCHW.x86", CASES.get("conv_int8_1x1_unpadded").kernel().config().template());
        // an 8-bit convolution's tile takes up to 32 output columns (a float one 16): 96 = 3 x 32, 48 = 2 x 24
        assertEquals(32, CASES.get("conv_int8_1x1_unpadded").kernel().config().getInt("reg_n"));
        assertEquals(24, CASES.get("depthwise_int8_stride2_pad_float_epilogue").kernel().config().getInt("reg_n"));
    }

    @Test
    void invalidConfigIsRejectedWithItsReason() {
        Function fn = parse(NCHWC_3X3);
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> PrimitiveLowering.lower(fn, "bad", Target.host(), Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHWc.x86\",\"knobs\":{\"ic_bn\":8,\"oc_bn\":16,\"oc_vec\":16,\"reg_n\":5,\"unroll_kw\":0,\"order\":\"kh_kw_ic\"}}"))));
        assertTrue(e.getMessage().contains("reg_n=5 must be a positive divisor of the output width 7"), e.getMessage());
        e = assertThrows(InvalidConfigException.class, () -> PrimitiveLowering.lower(fn, "bad", Target.host(), Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHWc.x86\",\"knobs\":{\"ic_bn\":16,\"oc_bn\":16,\"oc_vec\":16,\"reg_n\":7,\"unroll_kw\":0,\"order\":\"kh_kw_ic\"}}"))));
        assertTrue(e.getMessage().contains("ic_bn=16 but the data layout"), e.getMessage());
        e = assertThrows(InvalidConfigException.class, () -> PrimitiveLowering.lower(fn, "bad", Target.host(), Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"dense_pack.x86\",\"knobs\":{\"tile_y\":1,\"tile_x\":8,\"tile_k\":1}}"))));
        assertTrue(e.getMessage().contains("config is for template dense_pack.x86, not conv2d_NCHWc.x86"), e.getMessage());
        Function first = parse(CONV_7X7);
        e = assertThrows(InvalidConfigException.class, () -> PrimitiveLowering.lower(first, "bad", Target.host(), Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"conv2d_NCHW_ocvec.x86\",\"knobs\":{\"oc_bn\":12,\"unroll_kw\":0,\"order\":\"rc_ry_rx\"}}"))));
        assertTrue(e.getMessage().contains("oc_bn=12 must be a multiple of 8 dividing the output channels 16"), e.getMessage());
        e = assertThrows(InvalidConfigException.class, () -> PrimitiveLowering.lower(first, "bad", Target.host(), Optional.of(ScheduleConfig.fromJson(
                "{\"template\":\"dense_pack.x86\",\"knobs\":{\"tile_y\":1,\"tile_x\":8,\"tile_k\":1}}"))));
        assertTrue(e.getMessage().contains("config is for template dense_pack.x86, but nn.conv2d has templates conv2d_NCHW.x86, conv2d_NCHW_ocvec.x86 and conv2d_NCHW_int8_dot.x86"), e.getMessage());
    }

    @Test
    void unsupportedOperatorNamesTheOpAndTheGroup() {
        Function fn = parse("""
                fn (%x: Tensor[(4, 4), float32], Primitive=1) {
                  argwhere(%x)
                }""");
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> PrimitiveLowering.lower(fn, "grp7", Target.host(), Optional.empty()));
        assertTrue(e.getMessage().contains("group grp7") && e.getMessage().contains("argwhere"), e.getMessage());
        Function let = parse("""
                fn (%x: Tensor[(4, 4), float32], Primitive=1) {
                  let %y = exp(%x);
                  add(%y, %y)
                }""");
        e = assertThrows(UnsupportedOperationException.class, () -> PrimitiveLowering.lower(let, "grp8", Target.host(), Optional.empty()));
        assertTrue(e.getMessage().contains("group grp8: %y is not a parameter (Let nodes"), e.getMessage());
    }
}
