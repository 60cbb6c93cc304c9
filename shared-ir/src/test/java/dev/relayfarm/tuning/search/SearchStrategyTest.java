package dev.relayfarm.tuning.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every strategy proposes each configuration of a real task's space at most once, covers it, and is reproducible. */
class SearchStrategyTest {
    private static TuningTask conv, dense;

    @BeforeAll
    static void tasks() {
        conv = SearchTasks.conv();
        dense = TuningModels.tasks(SearchTasks.DENSE, 1).getFirst();
    }

    /** Every proposal until the strategy is exhausted, measured by {@code objective} batch by batch. */
    private static List<ScheduleConfig> drain(SearchStrategy s, SyntheticCost objective, int batch) {
        List<ScheduleConfig> all = new ArrayList<>();
        for (int round = 0; !s.exhausted(); round++) {
            List<ScheduleConfig> b = s.next(batch);
            assertFalse(b.isEmpty(), s.name() + " proposed nothing in round " + round + " though not exhausted");
            assertTrue(b.size() <= batch);
            all.addAll(b);
            s.observe(objective.measure(b));
        }
        assertEquals(List.of(), s.next(batch), s.name() + " proposes nothing once exhausted");
        return all;
    }

    private static void assertCoversOnce(TuningTask task, List<ScheduleConfig> proposed, String who) {
        assertEquals(proposed.size(), new HashSet<>(proposed).size(), who + " proposed a configuration twice");
        assertEquals(task.space().size(), proposed.size(), who + " did not cover the space");
    }

    @Test
    void gridEnumeratesTheSpaceInIndexOrder() {
        SyntheticCost objective = new SyntheticCost(dense, 1, 0);
        List<ScheduleConfig> all = drain(new GridSearch(dense, 0), objective, 5);
        assertEquals(dense.space().all().toList(), all);
    }

    @Test
    void everyStrategyCoversTheSpaceExactlyOnceEvenWithFailures() {
        SyntheticCost objective = new SyntheticCost(conv, 1, 7); // every 7th configuration fails
        for (String name : SearchStrategies.NAMES) {
            SearchStrategy s = SearchStrategies.create(name, conv, 42, new RidgeCostModel());
            List<ScheduleConfig> all = drain(s, objective, 16);
            assertCoversOnce(conv, all, name);
            assertEquals(conv.space().size(), s.history().trials(), name);
            assertEquals(objective.optimum(), s.history().bestCostUs(), name + " ends with the best of the space");
            assertTrue(s.history().best().orElseThrow().ok(), name + ": a failure never becomes the best");
        }
    }

    @Test
    void theSameSeedGivesTheSameProposalsAndAnotherSeedOthers() {
        SyntheticCost objective = new SyntheticCost(conv, 1, 0);
        for (String name : List.of("random", "ga", "xgb")) {
            List<ScheduleConfig> a = prefix(SearchStrategies.create(name, conv, 5, new RidgeCostModel()), objective);
            List<ScheduleConfig> b = prefix(SearchStrategies.create(name, conv, 5, new RidgeCostModel()), objective);
            List<ScheduleConfig> c = prefix(SearchStrategies.create(name, conv, 6, new RidgeCostModel()), objective);
            assertEquals(a, b, name + " with one seed");
            assertNotEquals(a, c, name + " with two seeds");
        }
    }

    private static List<ScheduleConfig> prefix(SearchStrategy s, SyntheticCost objective) {
        List<ScheduleConfig> out = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            List<ScheduleConfig> b = s.next(8);
            out.addAll(b);
            s.observe(objective.measure(b));
        }
        return out;
    }

    @Test
    void observedRecordsAreNeverProposedAgain() {
        SyntheticCost objective = new SyntheticCost(conv, 1, 0);
        // an earlier run's records: every even configuration
        List<ScheduleConfig> earlier = LongStream.range(0, conv.space().size()).filter(i -> i % 2 == 0).mapToObj(conv.space()::get).toList();
        for (String name : SearchStrategies.NAMES) {
            SearchStrategy s = SearchStrategies.create(name, conv, 3, new RidgeCostModel());
            s.observe(objective.measure(earlier));
            List<ScheduleConfig> rest = drain(s, objective, 16);
            Set<ScheduleConfig> overlap = new HashSet<>(rest);
            overlap.retainAll(earlier);
            assertEquals(Set.of(), overlap, name + " re-proposed recorded configurations");
            assertEquals(conv.space().size() - earlier.size(), rest.size(), name);
        }
    }

    @Test
    void aMeasurementOfAnotherTaskIsRefused() {
        SearchStrategy s = new RandomSearch(conv, 1);
        Measurement other = new SyntheticCost(dense, 1, 0).measure(List.of(dense.defaultConfig())).getFirst();
        assertThrows(IllegalArgumentException.class, () -> s.observe(List.of(other)));
    }

    @Test
    void earlyStoppingCountsTrialsWithoutImprovement() {
        SyntheticCost objective = new SyntheticCost(conv, 1, 0);
        SearchStrategy s = new GridSearch(conv, 0);
        EarlyStopping stop = new EarlyStopping(10);
        int rounds = 0;
        while (!s.exhausted() && !stop.shouldStop(s.history())) {
            s.observe(objective.measure(s.next(1)));
            rounds++;
        }
        SearchHistory h = s.history();
        assertEquals(h.bestTrial() + 10 + 1, h.trials(), "stops exactly 10 trials after the last improvement");
        assertTrue(rounds < conv.space().size(), "stopped before the end of the space");
        double[] curve = h.curve();
        for (int i = 1; i < curve.length; i++) assertTrue(curve[i] <= curve[i - 1], "a tuning curve never rises");
        assertThrows(IllegalArgumentException.class, () -> new EarlyStopping(0));
    }

    @Test
    void theFactoryKnowsTheCliNames() {
        assertEquals(List.of("xgb", "ga", "random", "grid"), SearchStrategies.NAMES);
        for (String name : SearchStrategies.NAMES) assertEquals(name, SearchStrategies.create(name, conv, 1).name());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SearchStrategies.create("bayes", conv, 1));
        assertTrue(e.getMessage().contains("xgb, ga, random, grid"), e.getMessage());
    }

    @Test
    void annealingProposesOnlyUntriedConfigurationsAndFindsFastOnes() {
        // exhaustiveLimit 0 forces the annealing path even on this small space
        var options = new ModelGuidedSearch.Options(8, 0.0, 0, 16, 60, 15);
        SyntheticCost objective = new SyntheticCost(conv, 9, 0);
        SearchStrategy s = new ModelGuidedSearch(conv, 9, new RidgeCostModel(), options, List.of());
        List<ScheduleConfig> all = new ArrayList<>();
        for (int round = 0; round < 6; round++) {
            List<ScheduleConfig> b = s.next(8);
            assertEquals(8, b.size());
            all.addAll(b);
            s.observe(objective.measure(b));
        }
        assertEquals(all.size(), new HashSet<>(all).size(), "annealing re-proposed a configuration");
        // guided rounds (after the random first) beat the space's median cost on average
        double[] costs = LongStream.range(0, conv.space().size()).mapToDouble(objective::cost).sorted().toArray();
        double median = costs[costs.length / 2];
        double guided = all.subList(8, all.size()).stream().mapToDouble(c -> objective.cost(conv.space().indexOf(c))).average().orElseThrow();
        assertTrue(guided < median, "guided proposals average " + guided + " µs, the space's median is " + median);
    }
}
