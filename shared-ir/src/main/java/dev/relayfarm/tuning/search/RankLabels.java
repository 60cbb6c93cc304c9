package dev.relayfarm.tuning.search;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The training label of each sample: its throughput relative to the best of its group ({@code best cost / cost}, in
 * (0, 1], 1 for the group's fastest; 0 for a failure), as AutoTVM's XGBTuner normalizes. Relative labels let
 * workloads of very different sizes train one model.
 */
final class RankLabels {
    private RankLabels() {}

    static double[] of(List<CostSample> samples) {
        Map<String, Double> best = new HashMap<>();
        for (CostSample s : samples) if (!s.failed()) best.merge(s.group(), s.costUs(), Math::min);
        double[] y = new double[samples.size()];
        for (int i = 0; i < y.length; i++) {
            CostSample s = samples.get(i);
            y[i] = s.failed() ? 0 : best.get(s.group()) / s.costUs();
        }
        return y;
    }

    /** Whether some group has two successful samples: the least that orders anything. */
    static boolean enough(List<CostSample> samples) {
        Map<String, Integer> ok = new HashMap<>();
        for (CostSample s : samples) if (!s.failed() && ok.merge(s.group(), 1, Integer::sum) >= 2) return true;
        return false;
    }
}
