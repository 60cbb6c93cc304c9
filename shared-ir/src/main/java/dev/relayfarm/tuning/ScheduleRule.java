package dev.relayfarm.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which stored schedule applies to a tuning task (ARCHITECTURE.md section 5, "the apply-best rule"), the one
 * rule both the farm's autotuner stage and {@code relayc compile --schedules} apply:
 * <ol>
 *   <li>only schedules stored for the task's workload key and target, measured on the device class compiled for
 *       (costs from another device say nothing about this one: apache/tvm#15549), whose config is for the task's
 *       template (a schedule of a template the kernel no longer uses, or of an alternative one, is not applied);</li>
 *   <li>a PINNED one first;</li>
 *   <li>else an APPROVED one not measured slower than the template default on the same device (unmeasured
 *       costs do not hold it back: approval is the reviewer's call);</li>
 *   <li>among several, the lowest cost (unmeasured last), then the one stored last;</li>
 *   <li>none: the template default.</li>
 * </ol>
 * PENDING and REJECTED schedules never apply.
 */
public final class ScheduleRule {
    private ScheduleRule() {}

    /**
     * The schedule that applies to {@code task} on a device of {@code deviceClass} among {@code stored} (oldest first),
     * or empty when its default does.
     */
    public static Optional<StoredSchedule> choose(TuningTask task, String deviceClass, List<StoredSchedule> stored) {
        return choose(task.key(), task.target().toString(), task.template(), deviceClass, stored);
    }

    /**
     * The same rule for a workload known by its key, target and the template its kernel uses, without a module to build
     * the task from: what the dashboard asks of a stored schedule's workload ("which schedule would a new job get").
     */
    public static Optional<StoredSchedule> choose(String workloadKey, String target, String template, String deviceClass, List<StoredSchedule> stored) {
        StoredSchedule best = null;
        for (StoredSchedule s : stored) {
            if (!s.workloadKey().equals(workloadKey) || !s.target().equals(target) || !s.deviceClass().equals(deviceClass)
                    || !s.config().template().equals(template)) continue;
            boolean applies = switch (s.status()) {
                case PINNED -> true;
                case APPROVED -> !s.slowerThanDefault();
                case PENDING, REJECTED -> false;
            };
            if (applies && (best == null || !worse(s, best))) best = s;
        }
        return Optional.ofNullable(best);
    }

    /** The configs codegen applies ({@link dev.relayfarm.compile.CompileOptions#schedules()}): the chosen one per task that has one. */
    public static Map<String, ScheduleConfig> configs(List<TuningTask> tasks, String deviceClass, List<StoredSchedule> stored) {
        Map<String, ScheduleConfig> out = new LinkedHashMap<>();
        chosen(tasks, deviceClass, stored).forEach((key, s) -> out.put(key, s.config()));
        return out;
    }

    /** The chosen schedule per task that has one, by workload key (with its costs, for those who weigh them). */
    public static Map<String, StoredSchedule> chosen(List<TuningTask> tasks, String deviceClass, List<StoredSchedule> stored) {
        Map<String, StoredSchedule> out = new LinkedHashMap<>();
        for (TuningTask t : tasks) choose(t, deviceClass, stored).ifPresent(s -> out.put(t.key(), s));
        return out;
    }

    /** Whether {@code s} ranks below {@code than}: not pinned against a pin, else a higher or unknown cost against a known lower one. */
    private static boolean worse(StoredSchedule s, StoredSchedule than) {
        boolean pinned = s.status() == ScheduleStatus.PINNED, thanPinned = than.status() == ScheduleStatus.PINNED;
        if (pinned != thanPinned) return thanPinned;
        if (than.costUs().isEmpty()) return false;
        return s.costUs().isEmpty() || s.costUs().getAsDouble() > than.costUs().getAsDouble();
    }
}
