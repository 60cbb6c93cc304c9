package dev.relayfarm.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link ScheduleRule}: pinned first, else approved and not slower than the default; same key, target, device class and template. */
class ScheduleRuleTest {
    private static final Target HOST = Target.host();
    private static final String HERE = "cpu-x86_64-avx2-8c-00000000";
    private static TuningTask task;
    private static ScheduleConfig a, b;

    @BeforeAll
    static void task() {
        task = dev.relayfarm.pipeline.Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst();
        a = TuningModels.nonDefault(task);
        b = task.space().all().filter(c -> !c.equals(a) && !c.equals(task.defaultConfig())).findFirst().orElseThrow();
    }

    private static StoredSchedule row(long id, ScheduleConfig config, ScheduleStatus status, Double cost, Double defaultCost) {
        return new StoredSchedule(id, task.key(), HOST.toString(), HERE, config, status, cost == null ? OptionalDouble.empty() : OptionalDouble.of(cost),
                defaultCost == null ? OptionalDouble.empty() : OptionalDouble.of(defaultCost));
    }

    private static Optional<Long> chosen(StoredSchedule... stored) {
        return ScheduleRule.choose(task, HERE, List.of(stored)).map(StoredSchedule::id);
    }

    @Test
    void aPinBeatsAFasterApprovedScheduleEvenWhenMeasuredSlower() {
        assertEquals(Optional.of(1L), chosen(row(1, a, ScheduleStatus.PINNED, 30.0, 20.0), row(2, b, ScheduleStatus.APPROVED, 5.0, 20.0)));
    }

    @Test
    void anApprovedScheduleAppliesUnlessMeasuredSlowerThanTheDefault() {
        assertEquals(Optional.of(1L), chosen(row(1, a, ScheduleStatus.APPROVED, 10.0, 20.0)));
        assertEquals(Optional.of(1L), chosen(row(1, a, ScheduleStatus.APPROVED, 20.0, 20.0)), "as fast as the default");
        assertEquals(Optional.of(1L), chosen(row(1, a, ScheduleStatus.APPROVED, null, null)), "not measured: the reviewer's approval stands");
        assertEquals(Optional.of(1L), chosen(row(1, a, ScheduleStatus.APPROVED, 10.0, null)));
        assertEquals(Optional.empty(), chosen(row(1, a, ScheduleStatus.APPROVED, 30.0, 20.0)));
    }

    @Test
    void pendingAndRejectedSchedulesNeverApply() {
        assertEquals(Optional.empty(), chosen(row(1, a, ScheduleStatus.PENDING, 1.0, 20.0), row(2, b, ScheduleStatus.REJECTED, 1.0, 20.0)));
    }

    @Test
    void amongApprovedTheCheapestThenTheLatest() {
        assertEquals(Optional.of(2L), chosen(row(1, a, ScheduleStatus.APPROVED, 15.0, 20.0), row(2, b, ScheduleStatus.APPROVED, 10.0, 20.0),
                row(3, a, ScheduleStatus.APPROVED, null, null)));
        assertEquals(Optional.of(2L), chosen(row(1, a, ScheduleStatus.APPROVED, null, null), row(2, b, ScheduleStatus.APPROVED, null, null)));
        assertEquals(Optional.of(2L), chosen(row(1, a, ScheduleStatus.PINNED, null, null), row(2, b, ScheduleStatus.PINNED, null, null)));
    }

    @Test
    void onlySchedulesMeasuredOnTheDeviceClassCompiledFor() {
        StoredSchedule elsewhere = new StoredSchedule(1, task.key(), HOST.toString(), "cpu-x86_64-avx512-64c-11111111", a, ScheduleStatus.PINNED,
                OptionalDouble.of(1.0), OptionalDouble.of(20.0));
        assertEquals(Optional.empty(), chosen(elsewhere), "a pin measured on another device class");
        assertEquals(Optional.of(1L), ScheduleRule.choose(task, "cpu-x86_64-avx512-64c-11111111", List.of(elsewhere)).map(StoredSchedule::id));
        assertEquals(Optional.of(2L), chosen(elsewhere, row(2, b, ScheduleStatus.APPROVED, 15.0, 20.0)));
    }

    @Test
    void onlyTheTasksKeyTargetAndTemplate() {
        StoredSchedule otherKey = new StoredSchedule(1, task.key() + "x", HOST.toString(), HERE, a, ScheduleStatus.PINNED, OptionalDouble.empty(), OptionalDouble.empty());
        StoredSchedule otherTarget = new StoredSchedule(2, task.key(), "c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", HERE, a, ScheduleStatus.PINNED,
                OptionalDouble.empty(), OptionalDouble.empty());
        // another template of the same operator (dense: packed or in place) is not the task's: it does not apply
        String alternative = task.template().equals("dense_pack.x86") ? "dense_nopack.x86" : "dense_pack.x86";
        StoredSchedule otherTemplate = row(3, new ScheduleConfig(alternative, Map.of("tile_y", 1)), ScheduleStatus.PINNED, null, null);
        assertEquals(Optional.empty(), chosen(otherKey, otherTarget, otherTemplate));
        assertEquals(Map.of(), ScheduleRule.configs(List.of(task), HERE, List.of(otherKey, otherTarget, otherTemplate)));
        assertEquals(Map.of(task.key(), a), ScheduleRule.configs(List.of(task), HERE, List.of(otherTemplate, row(4, a, ScheduleStatus.APPROVED, null, null))));
    }
}
