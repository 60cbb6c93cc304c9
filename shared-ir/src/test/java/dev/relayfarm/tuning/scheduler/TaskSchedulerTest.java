package dev.relayfarm.tuning.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The task scheduler over the five real tasks of {@link TuningModels#LAYERS}, fed measured costs as a tuner would. */
class TaskSchedulerTest {
    private static final List<TuningTask> TASKS = Stages.tasks(TuningModels.optimizedLayers(Target.host()), Target.host());

    /** Measurements of a config other than the default (the default's own come as {@code recordRound}'s baseline). */
    private static List<Measurement> round(TuningTask t, double... costs) {
        List<Measurement> out = new ArrayList<>();
        for (double c : costs) out.add(measured(t, TuningModels.nonDefault(t), c));
        return out;
    }

    private static Measurement measured(TuningTask t, ScheduleConfig config, double costUs) {
        return new Measurement(t.key(), config, new Measurement.Cost(costUs, 0.01, 10, 5));
    }

    @Test
    void everyTaskGetsARoundBeforeAnyGetsASecond() {
        TaskScheduler s = new TaskScheduler(TASKS, Map.of());
        List<String> first = new ArrayList<>();
        for (int i = 0; i < TASKS.size(); i++) {
            TuningTask t = s.next().orElseThrow();
            first.add(t.key());
            s.recordRound(t, round(t, 10), 10);
        }
        assertEquals(TASKS.stream().map(TuningTask::key).toList(), first);
    }

    @Test
    void theNextRoundGoesWhereTheModelGainsMost() {
        // task 0 is called 10 times per run and costs 100 µs; the others once at 10 µs: task 0 dominates the model
        TuningTask heavy = TASKS.getFirst();
        TaskScheduler s = new TaskScheduler(TASKS, Map.of(heavy.key(), 10));
        for (TuningTask t : TASKS) s.recordRound(t, round(t, t == heavy ? 100 : 10), t == heavy ? 100 : 10);
        assertEquals(heavy.key(), s.next().orElseThrow().key());
        assertEquals(10 * 100 + 4 * 10, s.modelUs(), 1e-9);
        // among equals, a task that keeps improving is preferred to one stuck for three rounds
        s.finish(heavy);
        TuningTask stuck = TASKS.get(1), improving = TASKS.get(2);
        for (int i = 0; i < 3; i++) s.recordRound(stuck, round(stuck, 10), Double.NaN);
        s.recordRound(improving, round(improving, 5), Double.NaN); // halved: 5 µs saved in one round
        assertEquals(improving.key(), s.next().orElseThrow().key());
    }

    @Test
    void finishedTasksGetNoMoreRoundsAndProgressReportsSpeedups() {
        TaskScheduler s = new TaskScheduler(TASKS, Map.of());
        for (TuningTask t : TASKS) {
            s.recordRound(t, round(t, 8, 12), 10);
            s.finish(t);
        }
        assertEquals(Optional.empty(), s.next());
        for (TaskScheduler.Progress p : s.progress()) {
            assertEquals(2, p.trials());
            assertEquals(10.0 / 8.0, p.speedup(), 1e-12);
        }
        assertEquals(5 * 10, s.defaultModelUs(), 1e-9);
        assertTrue(s.modelUs() < s.defaultModelUs());
    }

    @Test
    void theDefaultIsTheMedianOfItsMeasurementsAndNeverTheBest() {
        // the default measured 10, 13 and 7 µs in three batches (noise), and no other config under 10
        TuningTask t = TASKS.getFirst();
        TaskScheduler s = new TaskScheduler(List.of(t), Map.of());
        s.recordRound(t, round(t, 12), 10);
        s.recordRound(t, round(t, 11), 13);
        s.recordRound(t, round(t, 10.5), 7);
        assertEquals(10, s.progress().getFirst().defaultUs(), 0, "the median of the three, not the latest");
        assertEquals(10, s.progress().getFirst().bestUs(), 0, "the default's lucky 7 µs is no gain");
        assertEquals(1, s.defaultModelUs() / s.modelUs(), 0);
        // an even count: the mean of the middle two; a config under the median is a gain
        s.recordRound(t, round(t, 9), 12);
        assertEquals(11, s.progress().getFirst().defaultUs(), 0);
        assertEquals(11.0 / 9.0, s.defaultModelUs() / s.modelUs(), 1e-12);

        // resumed records hold each batch's default as a record of the default config: those are the default's measurements
        TaskScheduler resumed = new TaskScheduler(List.of(t), Map.of());
        resumed.recordRound(t, List.of(measured(t, t.defaultConfig(), 10), measured(t, t.defaultConfig(), 14), measured(t, t.defaultConfig(), 12),
                measured(t, TuningModels.nonDefault(t), 11)), Double.NaN);
        assertEquals(12, resumed.progress().getFirst().defaultUs(), 0);
        assertEquals(11, resumed.progress().getFirst().bestUs(), 0);
        assertEquals(4, resumed.progress().getFirst().trials());
    }

    @Test
    void failuresNeverBecomeTheBest() {
        TuningTask t = TASKS.getFirst();
        TaskScheduler s = new TaskScheduler(List.of(t), Map.of());
        s.recordRound(t, List.of(new Measurement(t.key(), t.defaultConfig(),
                new Measurement.Failure(dev.relayfarm.tuning.MeasureError.WRONG_ANSWER, "output 0 differs"))), 20);
        assertEquals(20, s.progress().getFirst().bestUs(), 0);
    }
}
