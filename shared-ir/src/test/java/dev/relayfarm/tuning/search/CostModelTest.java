package dev.relayfarm.tuning.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Both cost models rank configurations of a real task they have not seen: trained on half of the conv2d space
 * (costs from {@link SyntheticCost}), the Spearman correlation of their scores with the throughput of the other
 * half is high; the ridge fallback orders a monotone objective exactly.
 */
class CostModelTest {
    private static TuningTask conv;
    private static List<float[]> features;

    @BeforeAll
    static void load() {
        conv = SearchTasks.conv();
        TaskFeatures f = new TaskFeatures(conv);
        features = new ArrayList<>();
        for (long i = 0; i < conv.space().size(); i++) features.add(f.of(i).orElseThrow());
    }

    /** Spearman correlation of {@code model}'s scores with throughput on the odd configurations, trained on the even ones. */
    private static double heldOutSpearman(CostModel model, SyntheticCost objective) {
        List<CostSample> train = new ArrayList<>();
        List<float[]> test = new ArrayList<>();
        List<Double> throughput = new ArrayList<>();
        for (int i = 0; i < features.size(); i++) {
            if (i % 2 == 0) train.add(new CostSample(features.get(i), objective.cost(i), conv.key()));
            else {
                test.add(features.get(i));
                throughput.add(1 / objective.cost(i));
            }
        }
        model.fit(train);
        assertTrue(model.fitted());
        return spearman(model.predict(test), throughput.stream().mapToDouble(Double::doubleValue).toArray());
    }

    @Test
    void xgboostLoadsAndRanksUnseenConfigurations() {
        assumeTrue(XgbCostModel.loadError().isEmpty(), () -> "xgboost's native library does not load here: " + XgbCostModel.loadError().orElseThrow()
                + " (the ridge fallback is tested below)");
        assertTrue(CostModels.create(1) instanceof XgbCostModel, "the factory picks xgboost where it loads");
        double rho = heldOutSpearman(new XgbCostModel(1), new SyntheticCost(conv, 1, 0));
        assertTrue(rho > 0.8, "xgboost's held-out Spearman " + rho);
    }

    @Test
    void xgboostRefitsWarmAsSamplesArriveAndStaysDeterministic() {
        assumeTrue(XgbCostModel.loadError().isEmpty(), "xgboost's native library does not load here");
        SyntheticCost objective = new SyntheticCost(conv, 2, 7); // every 7th configuration fails
        double[] a = null;
        for (int run = 0; run < 2; run++) {
            XgbCostModel m = new XgbCostModel(7);
            List<CostSample> samples = new ArrayList<>();
            for (int i = 0; i < 48; i++) {
                samples.add(new CostSample(features.get(i * 5), objective.fails(i * 5) ? Double.POSITIVE_INFINITY : objective.cost(i * 5), conv.key()));
                if (samples.size() % 8 == 0) m.fit(samples); // cold at 8, 16, 32; warm at 24, 40, 48
            }
            double[] p = m.predict(features);
            if (a != null) assertTrue(Arrays.equals(a, p), "two identical runs predict identically");
            a = p;
        }
        double[] throughput = new double[features.size()];
        for (int i = 0; i < throughput.length; i++) throughput[i] = 1 / objective.cost(i);
        assertTrue(spearman(a, throughput) > 0.6, "after warm refits the model still ranks: " + spearman(a, throughput));
    }

    @Test
    void ridgeRanksUnseenConfigurations() {
        double rho = heldOutSpearman(new RidgeCostModel(), new SyntheticCost(conv, 1, 0));
        assertTrue(rho > 0.6, "ridge's held-out Spearman " + rho);
    }

    @Test
    void ridgeOrdersAMonotoneObjectiveExactly() {
        // cost falls with the vector width and the register tile: the fallback must order it as is
        RidgeCostModel m = new RidgeCostModel(1e-3);
        assertFalse(m.fitted());
        List<CostSample> train = new ArrayList<>();
        double[] truth = new double[features.size()];
        for (int i = 0; i < features.size(); i++) {
            float[] v = features.get(i);
            double score = 3 * v[LoopNestFeatures.index("s0.vector_width")] + v[LoopNestFeatures.index("max_local_alloc_elements")];
            truth[i] = score;
            train.add(new CostSample(v, Math.exp(-0.2 * score), conv.key()));
        }
        m.fit(train);
        double[] p = m.predict(features);
        for (int i = 0; i < p.length; i++) {
            for (int j = 0; j < p.length; j++) {
                if (truth[i] > truth[j] + 1e-6) assertTrue(p[i] > p[j], "configuration " + i + " is faster than " + j + " but ranked below it");
            }
        }
    }

    @Test
    void failuresRankBelowEverySuccess() {
        RidgeCostModel m = new RidgeCostModel();
        List<CostSample> train = new ArrayList<>();
        for (int i = 0; i < features.size(); i++) {
            boolean fails = SyntheticCost.raw(features.get(i), "s0.vector_width") == 1; // reg_n = 1 "crashes"
            train.add(new CostSample(features.get(i), fails ? Double.POSITIVE_INFINITY : 100, conv.key()));
        }
        m.fit(train);
        double[] p = m.predict(features);
        double worstSuccess = Double.POSITIVE_INFINITY, bestFailure = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < p.length; i++) {
            if (train.get(i).failed()) bestFailure = Math.max(bestFailure, p[i]);
            else worstSuccess = Math.min(worstSuccess, p[i]);
        }
        assertTrue(bestFailure < worstSuccess, "failures " + bestFailure + " vs successes " + worstSuccess);
        assertEquals(2, RankLabels.of(List.of(train.get(0), train.get(1))).length);
    }

    private static double spearman(double[] a, double[] b) {
        double[] ra = ranks(a), rb = ranks(b);
        double ma = Arrays.stream(ra).average().orElseThrow(), mb = Arrays.stream(rb).average().orElseThrow();
        double num = 0, da = 0, db = 0;
        for (int i = 0; i < a.length; i++) {
            num += (ra[i] - ma) * (rb[i] - mb);
            da += (ra[i] - ma) * (ra[i] - ma);
            db += (rb[i] - mb) * (rb[i] - mb);
        }
        return num / Math.sqrt(da * db);
    }

    /** Average ranks (ties share the mean of their positions). */
    private static double[] ranks(double[] v) {
        Integer[] order = new Integer[v.length];
        for (int i = 0; i < v.length; i++) order[i] = i;
        Arrays.sort(order, (x, y) -> Double.compare(v[x], v[y]));
        double[] r = new double[v.length];
        for (int i = 0; i < v.length;) {
            int j = i;
            while (j + 1 < v.length && v[order[j + 1]] == v[order[i]]) j++;
            for (int k = i; k <= j; k++) r[order[k]] = (i + j) / 2.0;
            i = j + 1;
        }
        return r;
    }
}
