package dev.relayfarm.vta.compile;

import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The schedules worth trying for a layer (the knobs a tuner searches) and the default. Candidates: output-row tiles
 * from the divisors of the output height (plus the whole height), channel-block tiles in powers of two (plus all
 * blocks), one or two virtual threads; only those whose tiles fit the buffers.
 */
public final class VtaScheduleSpace {
    private VtaScheduleSpace() {
    }

    public static List<VtaSchedule> candidates(QuantizedLayer layer, VtaConfig config) {
        int oh = layer.geometry().outHeight();
        int blocks = BlockedLayout.ceilDiv(layer.geometry().channelsOut(), config.blockOut());
        TreeSet<Integer> rows = new TreeSet<>();
        for (int d = 1; d <= oh; d++) if (oh % d == 0) rows.add(d);
        TreeSet<Integer> tcs = new TreeSet<>();
        for (int b = 1; b < blocks; b *= 2) tcs.add(b);
        tcs.add(blocks);
        List<VtaSchedule> out = new ArrayList<>();
        for (int vt = 1; vt <= 2; vt++) {
            for (int tc : tcs) {
                for (int th : rows) {
                    VtaSchedule s = new VtaSchedule(th, tc, vt);
                    if (fits(layer, s, config)) out.add(s);
                }
            }
        }
        return out;
    }

    /**
     * Double buffering, then the widest channel tile (powers of two, or all blocks) that fits with one output row,
     * then the tallest row tile that still fits: big tiles mean few DMAs and few instructions, and the second half
     * lets loads overlap compute. (The search shows that on these ALU-bound layers shorter row tiles, which pipeline
     * load, compute and store more finely, are often a few percent faster.) Falls back to one virtual thread; a layer where even the smallest
     * tile does not fit gets the capacity error of that tile.
     */
    public static VtaSchedule defaultSchedule(QuantizedLayer layer, VtaConfig config) {
        int oh = layer.geometry().outHeight();
        int blocks = BlockedLayout.ceilDiv(layer.geometry().channelsOut(), config.blockOut());
        for (int vt = 2; vt >= 1; vt--) {
            int tc = 0;
            for (int b = 1; b <= blocks; b *= 2) if (fits(layer, new VtaSchedule(1, b, vt), config)) tc = b;
            if (fits(layer, new VtaSchedule(1, blocks, vt), config)) tc = blocks;
            if (tc == 0) continue;
            int th = 1;
            for (int r = oh; r >= 1; r--) {
                if (fits(layer, new VtaSchedule(r, tc, vt), config)) {
                    th = r;
                    break;
                }
            }
            return new VtaSchedule(th, tc, vt);
        }
        LayerLowering.checkFits(layer, new VtaSchedule(1, 1, 1), config);
        throw new IllegalStateException("unreachable: the smallest tile fits but no schedule was chosen for " + layer.name());
    }

    private static boolean fits(QuantizedLayer layer, VtaSchedule s, VtaConfig config) {
        try {
            LayerLowering.checkFits(layer, s, config);
            return true;
        } catch (BufferCapacityException e) {
            return false;
        }
    }
}
