package dev.relayfarm.tuning.search;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.tuning.TuningTask;
import java.util.Arrays;
import java.util.function.LongFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guided strategies find good configurations of a real task's space sooner than random search: for several
 * seeds, random search runs {@code BUDGET} trials; each strategy's count is the trials it needs to reach random's
 * final best (at most {@code 2 x BUDGET}, counted as that when it never does); medians are compared. The objective is
 * {@link SyntheticCost} over the conv2d task's real features.
 */
class SearchEfficiencyTest {
    private static final int BUDGET = 48, BATCH = 8;
    private static final long[] SEEDS = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    private static TuningTask task;

    @BeforeAll
    static void task() {
        task = SearchTasks.conv();
    }

    /** Median over seeds of the trials {@code make}'s strategy needs to reach random search's final best. */
    private static double medianTrialsToRandomsBest(String label, LongFunction<SearchStrategy> make, StringBuilder log) {
        double[] trials = new double[SEEDS.length];
        double[] randoms = new double[SEEDS.length];
        for (int k = 0; k < SEEDS.length; k++) {
            long seed = SEEDS[k];
            SyntheticCost objective = new SyntheticCost(task, 100 + seed, 0);
            SearchHistory random = objective.run(new RandomSearch(task, seed), BUDGET, BATCH);
            double target = random.bestCostUs();
            randoms[k] = random.bestTrial() + 1;
            SearchStrategy s = make.apply(seed);
            double[] curve = objective.run(s, 2 * BUDGET, BATCH).curve();
            int reached = 2 * BUDGET;
            for (int t = 0; t < curve.length; t++) {
                if (curve[t] <= target) {
                    reached = t + 1;
                    break;
                }
            }
            trials[k] = reached;
        }
        log.append(label).append(": ").append(Arrays.toString(trials)).append(" (random's own: ").append(Arrays.toString(randoms)).append(")\n");
        return median(trials);
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    @Test
    void geneticSearchNeedsFewerTrialsThanRandom() {
        StringBuilder log = new StringBuilder();
        double ga = medianTrialsToRandomsBest("ga", seed -> new GeneticSearch(task, seed), log);
        System.out.print(log);
        assertTrue(ga < BUDGET, "GA's median trials to random's best after " + BUDGET + ": " + ga + "\n" + log);
    }

    @Test
    void modelGuidedSearchNeedsAtMostHalfRandomsTrials() {
        StringBuilder log = new StringBuilder();
        double xgb = medianTrialsToRandomsBest("model-guided (" + CostModels.create(0).name() + ")", seed -> new ModelGuidedSearch(task, seed, CostModels.create(seed)), log);
        System.out.print(log);
        assertTrue(xgb <= BUDGET / 2.0, "model-guided median trials to random's best after " + BUDGET + ": " + xgb + "\n" + log);
    }

    @Test
    void ridgeGuidedSearchBeatsRandomToo() {
        StringBuilder log = new StringBuilder();
        double ridge = medianTrialsToRandomsBest("model-guided (ridge)", seed -> new ModelGuidedSearch(task, seed, new RidgeCostModel()), log);
        System.out.print(log);
        assertTrue(ridge < BUDGET, "ridge-guided median trials to random's best after " + BUDGET + ": " + ridge + "\n" + log);
    }
}
