package dev.relayfarm.vta.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordSet;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.LayerLowering;
import dev.relayfarm.vta.compile.QuantizedLayer;
import dev.relayfarm.vta.compile.VtaSchedule;
import dev.relayfarm.vta.compile.VtaScheduleSpace;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which stored VTA record applies to a layer: the cheapest successful record of the task's workload measured in its
 * context (target string, device class and lowering: {@link VtaTarget#context}) whose config is a schedule of the layer
 * that fits. Unlike CPU records no noise margin over the default is asked for: simulated cycles are exact, and every
 * batch measured the default beside its candidates, so the cheapest record is never slower than it. Without such a
 * record the layer keeps {@link VtaScheduleSpace#defaultSchedule}.
 */
public final class VtaRecords {
    private VtaRecords() {
    }

    /** The record whose schedule applies to {@code task}, if any. */
    public static Optional<TuningRecord> best(VtaLayerTask task, Collection<TuningRecord> records) {
        RecordContext context = VtaTarget.context(task.config());
        String key = task.key();
        List<TuningRecord> mine = records.stream().filter(r -> r.workloadKey().equals(key) && r.target().equals(context.target())
                && r.deviceClass().equals(context.device().deviceClass()) && r.compiler().equals(context.compiler())
                && r.template().equals(VtaLayerTask.TEMPLATE) && fits(task, r.config())).toList();
        return RecordSet.cheapest(mine);
    }

    /**
     * The schedule per offloaded layer for {@code OffloadedModule.compile}: the stored best of the layer's workload
     * among {@code tasks}, else the default for {@code config}.
     */
    public static Function<QuantizedLayer, VtaSchedule> schedules(List<VtaLayerTask> tasks, Collection<TuningRecord> records, VtaConfig config) {
        Map<String, VtaSchedule> chosen = new HashMap<>();
        for (VtaLayerTask t : tasks) best(t, records).ifPresent(r -> chosen.put(t.key(), t.schedule(r.config())));
        return layer -> {
            VtaSchedule s = chosen.get(VtaLayerTask.workloadKey(layer));
            return s != null ? s : VtaScheduleSpace.defaultSchedule(layer, config);
        };
    }

    private static boolean fits(VtaLayerTask task, ScheduleConfig config) {
        try {
            LayerLowering.checkFits(task.layer(), task.schedule(config), task.config());
            return true;
        } catch (IllegalArgumentException e) { // a record of another space (an edited file, a changed lowering)
            return false;
        }
    }
}
