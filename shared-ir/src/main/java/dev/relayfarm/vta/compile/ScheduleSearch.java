package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Grid search over {@link VtaScheduleSpace#candidates}: lowers the layer under each schedule, runs it on the
 * SIMULATOR with the given input and keeps the fewest cycles (the cycle model is deterministic and, for a fixed
 * layer, data-independent, so one run per candidate measures it). Every candidate's output must equal the first's:
 * a schedule changes time, never values.
 */
public final class ScheduleSearch {
    private ScheduleSearch() {
    }

    public record Outcome(LayerReport best, LayerReport defaults, int tried) {
    }

    public static Outcome search(QuantizedLayer layer, VtaConfig config, NDArray input) {
        LoweredLayer byDefault = LayerLowering.lower(layer, VtaScheduleSpace.defaultSchedule(layer, config), config);
        LoweredLayer.Run defaultRun = byDefault.run(input);
        LayerReport defaults = LayerReport.of(byDefault, defaultRun.stats());
        LayerReport best = defaults;
        List<VtaSchedule> candidates = new ArrayList<>(VtaScheduleSpace.candidates(layer, config));
        for (VtaSchedule s : candidates) {
            LoweredLayer lowered = LayerLowering.lower(layer, s, config);
            LoweredLayer.Run run = lowered.run(input);
            if (!run.output().contentEquals(defaultRun.output())) {
                throw new IllegalStateException(layer.name() + ": schedule (" + s + ") computes a different output than the default (" + byDefault.schedule() + ")");
            }
            LayerReport r = LayerReport.of(lowered, run.stats());
            if (r.cycles() < best.cycles()) best = r;
        }
        return new Outcome(best, defaults, candidates.size());
    }
}
