package dev.relayfarm.tuning.record;

import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Tuning records to query: merged from several files, filtered by target and device class, the best per workload,
 * statistics per workload. Costs are only compared within one {@link RecordKey} (same workload, target, device class
 * and compiler). What {@code relayc records} prints and the tuner resumes from.
 */
public record RecordSet(List<TuningRecord> records) {
    /** Cheapest first; at equal cost the later measurement first (the latest word on a config). */
    private static final Comparator<TuningRecord> BEST_FIRST = Comparator.comparingDouble(TuningRecord::costUs)
            .thenComparing(TuningRecord::measuredAt, Comparator.reverseOrder());

    public RecordSet {
        records = List.copyOf(records);
    }

    /**
     * The records of all {@code sets}, each measurement once (equal records, e.g. a file imported twice, are one), in
     * the order they were measured (a stable sort: equal times keep their file order).
     */
    public static RecordSet merge(Collection<RecordSet> sets) {
        LinkedHashSet<TuningRecord> all = new LinkedHashSet<>();
        for (RecordSet s : sets) all.addAll(s.records);
        List<TuningRecord> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparing(TuningRecord::measuredAt));
        return new RecordSet(sorted);
    }

    /** The records for {@code target} (when given) measured on {@code deviceClass} (when given). */
    public RecordSet filter(Optional<String> target, Optional<String> deviceClass) {
        return new RecordSet(records.stream()
                .filter(r -> target.map(r.target()::equals).orElse(true))
                .filter(r -> deviceClass.map(r.deviceClass()::equals).orElse(true))
                .toList());
    }

    /** The records per key, in first-seen order. */
    public Map<RecordKey, List<TuningRecord>> byKey() {
        Map<RecordKey, List<TuningRecord>> out = new LinkedHashMap<>();
        for (TuningRecord r : records) out.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
        return out;
    }

    /** Per key, its {@code k} cheapest successful records (one per config: a config's cheapest), cheapest first. */
    public Map<RecordKey, List<TuningRecord>> best(int k) {
        if (k < 1) throw new IllegalArgumentException("top-k needs k >= 1, got " + k);
        Map<RecordKey, List<TuningRecord>> out = new LinkedHashMap<>();
        byKey().forEach((key, rs) -> {
            List<TuningRecord> ok = new ArrayList<>(rs.stream().filter(TuningRecord::ok).toList());
            ok.sort(BEST_FIRST);
            LinkedHashMap<Object, TuningRecord> perConfig = new LinkedHashMap<>();
            for (TuningRecord r : ok) perConfig.putIfAbsent(r.config(), r);
            List<TuningRecord> top = perConfig.values().stream().limit(k).toList();
            if (!top.isEmpty()) out.put(key, top);
        });
        return out;
    }

    /** The cheapest successful record of each key (absent for a key whose every candidate failed). */
    public static Optional<TuningRecord> cheapest(Collection<TuningRecord> records) {
        return records.stream().filter(TuningRecord::ok).min(BEST_FIRST);
    }

    /** One line per key: how many records, how many ran or failed and why, the best and its default's cost. */
    public List<WorkloadStats> stats() {
        List<WorkloadStats> out = new ArrayList<>();
        byKey().forEach((key, rs) -> {
            Map<MeasureError, Integer> failed = new EnumMap<>(MeasureError.class);
            int ok = 0;
            for (TuningRecord r : rs) {
                if (r.outcome() instanceof Measurement.Failure f) failed.merge(f.error(), 1, Integer::sum);
                else ok++;
            }
            Optional<TuningRecord> best = cheapest(rs);
            out.add(new WorkloadStats(key, best.map(TuningRecord::template).orElse(rs.getFirst().template()), rs.size(), ok, failed,
                    best.map(b -> OptionalDouble.of(b.costUs())).orElse(OptionalDouble.empty()),
                    best.map(TuningRecord::defaultCostUs).orElse(OptionalDouble.empty())));
        });
        return out;
    }
}
