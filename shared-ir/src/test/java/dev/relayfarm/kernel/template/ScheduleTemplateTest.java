package dev.relayfarm.kernel.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Config spaces (counts, enumeration, indexing), JSON round trips, validation messages, and that every config of a small space lowers. */
class ScheduleTemplateTest {
    private static Conv2dNCHWcTemplate nchwc(int w, int pad) {
        Placeholder x = Te.placeholder("x", List.of(1, 2, 7, w, 8), DType.FLOAT32), k = Te.placeholder("w", List.of(2, 2, 3, 3, 8, 16), DType.FLOAT32);
        return Conv2dNCHWcTemplate.create(x, k, Conv2d.Params.of(1, pad), "conv");
    }

    @Test
    void nchwcSpaceCountsDivisorsOfTheOutputWidth() {
        // output 7 x 12: reg_n in {1,2,3,4,6,12} x oc_vec {8,16} x unroll_kw {0,1} x order {2}, then the optional
        // reg_h {1,7} x tile_order {2} x unroll_ic {2}; ic_bn and oc_bn fixed
        ConfigSpace s = nchwc(12, 1).space();
        assertEquals(6 * 2 * 2 * 2 * 2 * 2 * 2, s.size());
        assertEquals(List.of(1, 2, 3, 4, 6, 12), s.knob("reg_n").candidates());
        assertEquals(List.of(8, 16), s.knob("oc_vec").candidates());
        Set<ScheduleConfig> all = new HashSet<>(s.all().toList());
        assertEquals(s.size(), all.size());
        for (long i = 0; i < s.size(); i++) assertEquals(i, s.indexOf(s.get(i)));
        // output width 7 (prime): reg_n in {1, 7}
        assertEquals(2 * 2 * 2 * 2 * 2 * 2 * 2, nchwc(7, 1).space().size());
    }

    @Test
    void nchwcDefaultTileFillsTheRegisters() {
        // width 12: 6 columns x 16 channels (12 accumulators, 2 weight vectors per 6 broadcasts)
        ScheduleConfig c12 = nchwc(12, 1).defaultConfig();
        assertEquals(List.of(6, 16), List.of(c12.getInt("reg_n"), c12.getInt("oc_vec")));
        // width 13 (prime): 13 x 16 does not fit, 1 x 16 starves the FMA pipes; 13 columns x 8 channels does
        ScheduleConfig c13 = nchwc(13, 1).defaultConfig();
        assertEquals(List.of(13, 8), List.of(c13.getInt("reg_n"), c13.getInt("oc_vec")));
        // width 7: the whole row of 16 channels (14 accumulators)
        ScheduleConfig c7 = nchwc(7, 1).defaultConfig();
        assertEquals(List.of(7, 16), List.of(c7.getInt("reg_n"), c7.getInt("oc_vec")));
    }

    private static DepthwiseConv2dNCHWcTemplate depthwise(int h, int w, Registers registers) {
        Placeholder x = Te.placeholder("x", List.of(1, 2, h, w, 16), DType.FLOAT32), k = Te.placeholder("w", List.of(2, 1, 3, 3, 1, 16), DType.FLOAT32);
        return DepthwiseConv2dNCHWcTemplate.create(x, k, Conv2d.Params.of(1, 1), "dw", registers);
    }

    @Test
    void depthwiseDefaultTileCountsAccumulatorsInTheTargetsRegisters() {
        Registers avx512 = new Registers(16);
        // width 12, 16 channels: 6 columns of 2 AVX2 registers, 12 columns of 1 AVX-512 register
        assertEquals(6, depthwise(6, 12, Registers.AVX2).defaultConfig().getInt("reg_n"));
        assertEquals(12, depthwise(6, 12, avx512).defaultConfig().getInt("reg_n"));
        // width 20 on AVX-512: 10 columns; width 4 x 131: 4 columns are too few to hide the FMA latency, 2 rows make 8
        assertEquals(Map.of("block", 16, "reg_n", 10, "unroll_kw", 1, "unroll_kh", 0), depthwise(6, 20, avx512).defaultConfig().knobs());
        ScheduleConfig rows = depthwise(6, 524, avx512).defaultConfig();
        assertEquals(List.of(4, 2), List.of(rows.getInt("reg_n"), rows.getInt("reg_h")));
        // a prime width on AVX2: one column (7 would take 14 registers), as many rows as fit (3 of the height 6)
        ScheduleConfig prime = depthwise(6, 7, Registers.AVX2).defaultConfig();
        assertEquals(List.of(1, 3), List.of(prime.getInt("reg_n"), prime.getInt("reg_h")));
        // reg_h must divide the output height (WholeSpaceLoweringTest runs multi-row depthwise tiles against the interpreter)
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> depthwise(6, 7, Registers.AVX2).validate(prime.with("reg_h", 4)));
        assertTrue(e.getMessage().contains("reg_h=4 must be a positive divisor of the output height 6"), e.getMessage());
    }

    /** {@code out[i, j] = sum_k x[i, k] * w[j, k]} in {@code acc}, the inputs cast to it. */
    private static ReductionTemplate rowDot(DType in, DType weights, DType acc, int k) {
        Placeholder x = Te.placeholder("x", List.of(1, k), in), w = Te.placeholder("w", List.of(10, k), weights);
        IterVar r = Te.reduceAxis("rk", k);
        return new ReductionTemplate(Te.compute("dense", List.of(1, 10), ix -> Te.sum(
                new Cast(acc, x.at(ix.get(0), r.var())).mul(new Cast(acc, w.at(ix.get(1), r.var()))), r)), "wl");
    }

    @Test
    void anIntegerDotProductOverContiguousRowsKeepsTheReductionInnermost() {
        // int8 dense: the reduction innermost (the C compiler's dot-product vectorization), not the 10 columns
        assertEquals(0, rowDot(DType.UINT8, DType.INT8, DType.INT32, 256).defaultConfig().getInt("vectorize"));
        // a float sum is not reassociated by the compiler: its columns stay the lanes
        assertEquals(1, rowDot(DType.FLOAT32, DType.FLOAT32, DType.FLOAT32, 256).defaultConfig().getInt("vectorize"));
        // too short to be worth a dot product
        assertEquals(1, rowDot(DType.UINT8, DType.INT8, DType.INT32, 16).defaultConfig().getInt("vectorize"));
        // an integer sum over a strided axis (x[k, j]): the contiguous columns stay the lanes
        Placeholder x = Te.placeholder("x", List.of(256, 10), DType.INT32);
        IterVar r = Te.reduceAxis("rk", 256);
        ReductionTemplate columns = new ReductionTemplate(Te.compute("colsum", List.of(1, 10), ix -> Te.sum(x.at(r.var(), ix.get(1)), r)), "wl");
        assertEquals(1, columns.defaultConfig().getInt("vectorize"));
    }

    @Test
    void nchwOcVecSpaceAndDefault() {
        Placeholder x = Te.placeholder("x", List.of(1, 3, 224, 224), DType.FLOAT32), k = Te.placeholder("w", List.of(64, 3, 3, 3), DType.FLOAT32);
        Conv2dNCHWOcVecTemplate t = Conv2dNCHWOcVecTemplate.create(x, k, new Conv2d.Params(2, 2, 0, 0, 0, 0, 1, 1), "conv", "wl", Optional.empty());
        // oc_bn {8,16,32,64} x unroll_kw {0,1} x order {2}
        assertEquals(4 * 2 * 2, t.space().size());
        assertEquals(64, t.defaultConfig().getInt("oc_bn"));
        for (long i = 0; i < t.space().size(); i++) assertEquals(t.space().get(i), ScheduleConfig.fromJson(t.space().get(i).toJson()));
        assertMessage(t, t.defaultConfig().with("oc_bn", 24), "oc_bn=24 must be a multiple of 8 dividing the output channels 64");
        // the packing is built for one oc_bn: scheduling another is rejected, not miscompiled
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> t.schedule(t.defaultConfig().with("oc_bn", 16), t.anchor()));
        assertTrue(e.getMessage().contains("packing was built for oc_bn=64"), e.getMessage());
    }

    @Test
    void denseSpaces() {
        Placeholder d = Te.placeholder("d", List.of(8, 64), DType.FLOAT32), w = Te.placeholder("w", List.of(40, 64), DType.FLOAT32);
        // tile_y {1,2,4,8} x tile_x {8,16,32} x tile_k {1,2,4,8,16} x tile_order {rows, cols}
        assertEquals(4 * 3 * 5 * 2, DensePackTemplate.create(d, w, "dense", Optional.empty()).space().size());
        // vec {1,4,8,16} x tile_x divisors of 40 up to 16 {1,2,4,5,8,10}
        assertEquals(4 * 6, DenseNoPackTemplate.create(d, w, "dense", Optional.empty()).space().size());
    }

    /** With 8 to 15 weight rows the space's only tile_x is 8; the default once was 16 and refused itself. */
    @Test
    void denseDefaultIsInItsSpaceForEveryColumnCount() {
        Placeholder d = Te.placeholder("d", List.of(6, 32), DType.FLOAT32);
        for (int n = 1; n <= 40; n++) {
            DensePackTemplate t = DensePackTemplate.create(d, Te.placeholder("w", List.of(n, 32), DType.FLOAT32), "dense", Optional.empty());
            t.validate(t.defaultConfig());
        }
    }

    @Test
    void knobsAddedLaterAreOptionalAndMeanTheOldSchedule() {
        Conv2dNCHWcTemplate t = nchwc(12, 1);
        ConfigSpace s = t.space();
        ScheduleConfig stored = t.defaultConfig();
        // the default (and any config stored before reg_h, tile_order and unroll_ic) leaves them out ...
        assertEquals(Set.of("ic_bn", "oc_bn", "reg_n", "oc_vec", "unroll_kw", "order"), stored.knobs().keySet());
        t.validate(stored);
        // ... and is the space's point with their old values, spelled without them
        ScheduleConfig full = s.complete(stored);
        assertEquals(List.of(1, "oc_oh", 0), List.of(full.getInt("reg_h"), full.getString("tile_order"), full.getInt("unroll_ic")));
        assertEquals(s.indexOf(stored), s.indexOf(full));
        assertEquals(stored, s.get(s.indexOf(full)));
        assertEquals(t.schedule(stored, t.anchor()), t.schedule(full, t.anchor()));
        // a point with a new knob at another value names it, and schedules differently
        ScheduleConfig rows = s.get(s.indexOf(full.with("reg_h", 7).with("reg_n", 2).with("oc_vec", 8)));
        assertEquals(7, rows.getInt("reg_h"));
        assertTrue(!t.schedule(rows, t.anchor()).equals(t.schedule(stored.with("reg_n", 2).with("oc_vec", 8), t.anchor())));
        // a multi-row tile past the register file is refused before lowering
        assertMessage(t, stored.with("reg_h", 7), "reg_h=7 x reg_n=6 x oc_vec=16 needs 84 accumulator vectors");
        assertMessage(t, stored.with("reg_h", 3), "reg_h=3 must be a positive divisor of the output height 7");
        // an unrolled channel block too long to compile within the tuner's timeout: 28 columns x 2 vectors x 16 channels x 3 taps
        Placeholder x = Te.placeholder("x", List.of(1, 1, 7, 28, 16), DType.FLOAT32), k = Te.placeholder("w", List.of(1, 1, 3, 3, 16, 16), DType.FLOAT32);
        Conv2dNCHWcTemplate wide = Conv2dNCHWcTemplate.create(x, k, Conv2d.Params.of(1, 1), "conv");
        ScheduleConfig longRow = wide.defaultConfig().with("reg_n", 28).with("oc_vec", 16).with("unroll_kw", 1);
        wide.validate(longRow);
        assertMessage(wide, longRow.with("unroll_ic", 1), "spells out 2688 vector FMAs per unrolled step; at most 1024");
        wide.validate(longRow.with("unroll_ic", 1).with("unroll_kw", 0).with("reg_n", 7));
        // a required knob stays required
        assertThrows(IllegalArgumentException.class, () -> new Knob("k", List.of(1, 2), "doc", 3));
    }

    @Test
    void configJsonRoundTrip() {
        ConfigSpace s = nchwc(12, 1).space();
        for (long i = 0; i < s.size(); i++) {
            ScheduleConfig c = s.get(i);
            ScheduleConfig back = ScheduleConfig.fromJson(c.toJson());
            assertEquals(c, back);
            assertEquals(i, s.indexOf(back));
        }
        assertEquals("{\"template\":\"conv2d_NCHWc.x86\",\"knobs\":{\"ic_bn\":8,\"oc_bn\":16,\"oc_vec\":16,\"order\":\"ic_kh_kw\",\"reg_n\":6,\"unroll_kw\":1}}",
                nchwc(12, 1).defaultConfig().toJson());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ScheduleConfig.fromJson("{\"template\":\"x\",\"knobs\":{\"a\":[1]}}"));
        assertTrue(e.getMessage().contains("not a schedule config") || e.getMessage().contains("knob a must be an integer or a string"), e.getMessage());
    }

    @Test
    void invalidConfigsAreRejectedWithTheirReason() {
        Conv2dNCHWcTemplate t = nchwc(12, 1);
        ScheduleConfig good = t.defaultConfig();
        t.validate(good);
        assertMessage(t, good.with("reg_n", 5), "reg_n=5 must be a positive divisor of the output width 12");
        assertMessage(t, good.with("oc_bn", 8), "oc_bn=8 but the weight layout");
        assertMessage(t, good.with("oc_vec", 6), "oc_vec=6 must be a positive divisor of oc_bn=16");
        assertMessage(t, good.with("oc_vec", 4), "knob oc_vec=4 is not valid for this workload (candidates [8, 16]");
        assertMessage(t, good.with("order", "rx_first"), "knob order=rx_first is not valid for this workload (candidates [kh_kw_ic, ic_kh_kw]");
        assertMessage(t, good.with("tile_z", 2), "unknown knobs [tile_z]");
        assertMessage(t, good.with("reg_n", "six"), "knob reg_n=six is not valid for this workload");
        assertMessage(t, new ScheduleConfig(Conv2dNCHWcTemplate.NAME, Map.of("reg_n", 6)), "has no value for knob ic_bn");
        assertMessage(t, new ScheduleConfig(DensePackTemplate.NAME, Map.of()), "config is for template dense_pack.x86, not conv2d_NCHWc.x86");
        Placeholder d = Te.placeholder("d", List.of(6, 64), DType.FLOAT32), w = Te.placeholder("w", List.of(40, 64), DType.FLOAT32);
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> DensePackTemplate.create(d, w, "dense",
                Optional.of(new ScheduleConfig(DensePackTemplate.NAME, Map.of("tile_y", 4, "tile_x", 16, "tile_k", 1)))));
        assertTrue(e.getMessage().contains("tile_y=4 must be a positive divisor of the batch 6"), e.getMessage());
    }

    private static void assertMessage(ScheduleTemplate t, ScheduleConfig c, String expected) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> t.validate(c));
        assertTrue(e instanceof InvalidConfigException, e.toString());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void everyConfigOfTheSpaceLowers() {
        for (int pad : List.of(0, 1)) {
            Conv2dNCHWcTemplate t = nchwc(12, pad);
            Placeholder x = (Placeholder) t.anchor().inputs().stream().filter(p -> p instanceof Placeholder ph && ph.name().equals("x")).findFirst()
                    .orElseGet(() -> t.stages().getFirst().inputs().getFirst());
            Placeholder k = (Placeholder) t.anchor().inputs().stream().filter(p -> p.name().equals("w")).findFirst().orElseThrow();
            t.space().all().forEach(c -> {
                try {
                    Lowering.lower(new KernelDef("k", List.of(x, k), List.of(t.anchor())), t.schedule(c, t.anchor()));
                } catch (InvalidConfigException e) {
                    // only multi-row tiles past the register file, and unrolled channel blocks too long to compile, are refused
                    assertTrue(c.knobs().containsKey("reg_h") && e.getMessage().contains("accumulator vectors")
                            || c.knobs().containsKey("unroll_ic") && e.getMessage().contains("vector FMAs"), c + ": " + e.getMessage());
                }
            });
        }
    }
}
