package dev.relayfarm.tuning.record;

import dev.relayfarm.tuning.ScheduleRule;
import dev.relayfarm.tuning.ScheduleStatus;
import dev.relayfarm.tuning.StoredSchedule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Which tuning records may apply, as the stored schedules {@link ScheduleRule} chooses among (ARCHITECTURE.md
 * section 5: "a tuned schedule is only applied if it beats that default on the same device"): per workload, target,
 * device class and template, among the records built by the compiler that will build the artifact, the cheapest
 * successful record — and only when it was measured faster than the template default in its own batch. A record of
 * another compiler never becomes a schedule here; one of another target or device class becomes a schedule that
 * {@link ScheduleRule} only applies to that target and device class.
 *
 * <p>Only the cheapest is considered: when it did not beat its batch's default (the default ran faster there), the
 * default is the best known config and no slower record is applied in its place.
 */
public final class RecordSchedules {
    private RecordSchedules() {}

    private record Group(RecordKey key, String template) {}

    /**
     * The approved schedules {@code records} give for artifacts built by {@code compiler} (a {@code CCompiler}
     * identity); each schedule's id is its record's position in {@code records}, from 1.
     */
    public static List<StoredSchedule> stored(List<TuningRecord> records, String compiler) {
        Map<Group, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < records.size(); i++) {
            TuningRecord r = records.get(i);
            if (!r.compiler().equals(compiler)) continue;
            groups.computeIfAbsent(new Group(r.key(), r.template()), g -> new ArrayList<>()).add(i);
        }
        List<StoredSchedule> out = new ArrayList<>();
        for (List<Integer> group : groups.values()) {
            Optional<TuningRecord> best = RecordSet.cheapest(group.stream().map(records::get).toList());
            if (best.isEmpty() || !best.get().fasterThanDefault()) continue;
            TuningRecord b = best.get();
            // the last of equal records (a file imported twice) as its id: a line number to point at
            long id = group.stream().filter(i -> records.get(i).equals(b)).mapToLong(i -> i + 1).max().orElseThrow();
            out.add(new StoredSchedule(id, b.workloadKey(), b.target(), b.deviceClass(), b.config(), ScheduleStatus.APPROVED,
                    OptionalDouble.of(b.costUs()), b.defaultCostUs()));
        }
        return out;
    }
}
