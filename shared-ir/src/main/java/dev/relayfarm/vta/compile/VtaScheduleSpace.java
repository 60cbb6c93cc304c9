package dev.relayfarm.vta.compile;

import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The schedules worth trying for a layer (the knobs a tuner searches) and the default. Candidates: output-row tiles
 * from the divisors of the output height, channel-block tiles in powers of two (plus all blocks), the two widest
 * reduction steps that fit, one or two virtual threads; only those whose tiles fit the buffers.
 */
public final class VtaScheduleSpace {
    private VtaScheduleSpace() {
    }

    public static List<VtaSchedule> candidates(QuantizedLayer layer, VtaConfig config) {
        int oh = layer.geometry().outHeight();
        TreeSet<Integer> rows = new TreeSet<>();
        for (int d = 1; d <= oh; d++) if (oh % d == 0) rows.add(d);
        List<VtaSchedule> out = new ArrayList<>();
        for (int vt = 1; vt <= 2; vt++) {
            List<Integer> cis = reductionSteps(layer, config, vt);
            for (int ci : cis.subList(0, Math.min(2, cis.size()))) {
                for (int tc : powersAndAll(outBlocks(layer, config))) {
                    for (int th : rows) {
                        VtaSchedule s = new VtaSchedule(th, tc, ci, vt);
                        if (fits(layer, s, config)) out.add(s);
                    }
                }
            }
        }
        return out;
    }

    /**
     * Double buffering, the whole reduction in one step if one output row allows it (else the widest step that
     * fits), then the widest channel tile that fits with one output row, then the tallest row tile that still
     * fits: big tiles mean few DMAs and few instructions, and the second half lets loads overlap compute. (The search
     * shows that on these ALU-bound layers shorter row tiles, which pipeline load, compute and store more finely, are
     * often a few percent faster.) Falls back to one virtual thread; a layer where even the smallest tile does not fit
     * gets the capacity error of that tile.
     */
    public static VtaSchedule defaultSchedule(QuantizedLayer layer, VtaConfig config) {
        int oh = layer.geometry().outHeight();
        for (int vt = 2; vt >= 1; vt--) {
            List<Integer> cis = reductionSteps(layer, config, vt);
            if (cis.isEmpty()) continue;
            int ci = cis.get(0);
            int tc = 1;
            for (int b : powersAndAll(outBlocks(layer, config))) if (fits(layer, new VtaSchedule(1, b, ci, vt), config)) tc = b;
            int th = 1;
            for (int r = oh; r > 1; r--) {
                if (fits(layer, new VtaSchedule(r, tc, ci, vt), config)) {
                    th = r;
                    break;
                }
            }
            return new VtaSchedule(th, tc, ci, vt);
        }
        LayerLowering.checkFits(layer, new VtaSchedule(1, 1, 1, 1), config);
        throw new IllegalStateException("unreachable: the smallest tile fits but no schedule was chosen for " + layer.name());
    }

    /** Reduction steps that fit with one output row and one channel block, widest first: all blocks, then powers of two. */
    private static List<Integer> reductionSteps(QuantizedLayer layer, VtaConfig config, int vt) {
        int in = BlockedLayout.ceilDiv(layer.gemmChannelsIn(), config.blockIn());
        List<Integer> out = new ArrayList<>();
        for (int ci : powersAndAll(in).descendingSet()) {
            if (fits(layer, new VtaSchedule(1, 1, ci == in ? VtaSchedule.ALL : ci, vt), config)) out.add(ci == in ? VtaSchedule.ALL : ci);
        }
        return out;
    }

    private static int outBlocks(QuantizedLayer layer, VtaConfig config) {
        return BlockedLayout.ceilDiv(layer.geometry().channelsOut(), config.blockOut());
    }

    private static TreeSet<Integer> powersAndAll(int blocks) {
        TreeSet<Integer> s = new TreeSet<>();
        for (int b = 1; b < blocks; b *= 2) s.add(b);
        s.add(blocks);
        return s;
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
