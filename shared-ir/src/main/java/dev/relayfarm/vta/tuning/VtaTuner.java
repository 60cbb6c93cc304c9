package dev.relayfarm.vta.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Tunes VTA layer tasks as tuning records: per task, the schedules of {@code VtaScheduleSpace} grid
 * ({@link VtaLayerTask#candidates}, the order {@code ScheduleSearch} tries them) in batches, each measured with the
 * default by a {@link LayerMeasurer} (the simulator here, an FPGA agent through the farm), every batch appended as
 * records in the task's {@link VtaTarget#context} as it comes. Records of an earlier run ({@code prior}) resume it:
 * their configs are not measured again, so a second run over a finished file measures nothing.
 *
 * <p>Why not the CPU's {@code Tuner}: its tasks, search strategies and task scheduler are typed on a kernel's
 * {@code KernelPlan} (a C target, loop-nest features for the cost model); the VTA spaces are a few dozen schedules that
 * fit, which a grid covers. What is shared is everything around the search: the records, their files and table, the
 * batch-with-baseline protocol and its {@code BaselineFailedException}, the apply rule's data.
 *
 * @see VtaRecords which record a later compile applies
 */
public final class VtaTuner {
    private static final String DEFAULT_FAILED = "the default schedule failed: ";

    /**
     * @param batch  schedules per round (besides the default measured with them)
     * @param trials schedules measured per task at most, or 0 for the whole space
     */
    public record Options(int batch, int trials) {
        public Options {
            if (batch < 1) throw new IllegalArgumentException("a round measures at least 1 schedule, got " + batch);
            if (trials < 0) throw new IllegalArgumentException("the trial budget cannot be negative, got " + trials);
        }
    }

    /** Told after every measured round (the farm's worker updates its task row and checks it still holds it). */
    @FunctionalInterface
    public interface Listener {
        void afterRound(VtaLayerTask task, MeasuredBatch batch);
    }

    /**
     * One task's outcome.
     *
     * @param measured schedules this run measured (the default's re-measurements not counted)
     * @param best     the cheapest successful record of the task, prior ones included
     * @param note     why the task stopped: space exhausted, trial budget, or the default failing
     * @param defaultFailed whether it stopped because the default schedule failed (nothing could be checked)
     */
    public record Outcome(VtaLayerTask task, int measured, Optional<TuningRecord> best, String note, boolean defaultFailed) {
    }

    private final LayerMeasurer measurer;
    private final Path records;
    private final Options options;
    private final Listener listener;

    /** {@code records}: the file every batch is appended to, or null to keep none (the farm writes its table itself). */
    public VtaTuner(LayerMeasurer measurer, Path records, Options options, Listener listener) {
        this.measurer = Objects.requireNonNull(measurer, "measurer");
        this.records = records;
        this.options = Objects.requireNonNull(options, "options");
        this.listener = listener != null ? listener : (t, b) -> {};
    }

    public List<Outcome> tune(List<VtaLayerTask> tasks, List<TuningRecord> prior) {
        List<Outcome> out = new ArrayList<>();
        for (VtaLayerTask t : tasks) out.add(tune(t, prior));
        return out;
    }

    private Outcome tune(VtaLayerTask task, List<TuningRecord> prior) {
        RecordContext context = VtaTarget.context(task.config());
        List<TuningRecord> mine = new ArrayList<>(prior.stream().filter(r -> r.workloadKey().equals(task.key()) && r.target().equals(context.target())
                && r.deviceClass().equals(context.device().deviceClass()) && r.compiler().equals(context.compiler())).toList());
        Set<ScheduleConfig> measured = new HashSet<>();
        for (TuningRecord r : mine) measured.add(r.config());
        ScheduleConfig byDefault = task.defaultConfig();
        List<ScheduleConfig> pending = new ArrayList<>(task.candidates());
        pending.removeIf(c -> c.equals(byDefault) || measured.contains(c));
        boolean defaultMeasured = measured.contains(byDefault);
        int done = 0;
        String note = "space exhausted";
        while (!pending.isEmpty() || !defaultMeasured) {
            if (options.trials() > 0 && done >= options.trials()) {
                note = "trial budget spent";
                break;
            }
            int size = Math.min(options.batch(), pending.size());
            if (options.trials() > 0) size = Math.min(size, options.trials() - done);
            List<ScheduleConfig> round = new ArrayList<>(pending.subList(0, size));
            MeasuredBatch batch;
            try {
                batch = measurer.measureWithBaseline(task, round);
            } catch (BaselineFailedException e) {
                // nothing else can be checked without the default's output: record why and leave the task
                mine.addAll(append(List.of(e.baseline()), byDefault, context));
                note = DEFAULT_FAILED + e.getMessage();
                break;
            }
            pending.subList(0, size).clear();
            defaultMeasured = true;
            List<Measurement> all = new ArrayList<>();
            all.add(batch.baseline());
            all.addAll(batch.results());
            mine.addAll(append(all, byDefault, context));
            done += batch.results().size();
            listener.afterRound(task, batch);
        }
        return new Outcome(task, done, VtaRecords.best(task, mine), note, note.startsWith(DEFAULT_FAILED));
    }

    private List<TuningRecord> append(List<Measurement> batch, ScheduleConfig byDefault, RecordContext context) {
        List<TuningRecord> rs = TuningRecord.batch(batch, byDefault, context, Instant.now());
        if (records != null) {
            try {
                RecordFile.append(records, rs);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot append tuning records to " + records + ": " + e.getMessage(), e);
            }
        }
        return rs;
    }
}
