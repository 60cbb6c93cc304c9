package dev.relayfarm.tuning.search;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;
import ml.dmlc.xgboost4j.java.XGBoostError;

/**
 * Gradient-boosted trees (XGBoost4J) with the pairwise rank objective, AutoTVM's XGBTuner model: labels are
 * {@link RankLabels} (relative throughput, 0 for failures), one query group per workload, so only configurations of
 * the same workload are compared. Warm between rounds: a fit adds {@code warmRounds} trees to the previous booster
 * on all samples; it starts over with {@code coldRounds} trees when the samples have doubled since the last cold
 * fit (trees grown on a handful of samples would otherwise dominate). One thread, seeded: deterministic.
 *
 * <p>Needs the native library inside the xgboost4j jar; {@link #loadError} says whether it loads here.
 */
public final class XgbCostModel implements CostModel {
    private final long seed;
    private final int coldRounds, warmRounds;
    private Booster booster;
    private int samplesAtColdFit;

    public XgbCostModel(long seed, int coldRounds, int warmRounds) {
        this.seed = seed;
        this.coldRounds = coldRounds;
        this.warmRounds = warmRounds;
    }

    public XgbCostModel(long seed) {
        this(seed, 80, 20);
    }

    /** Why XGBoost cannot be used in this JVM (its native library does not load), or empty when it can. */
    public static Optional<String> loadError() {
        return Probe.ERROR;
    }

    /** Loads the native library once, by building a tiny matrix. */
    private static final class Probe {
        static final Optional<String> ERROR = probe();

        private static Optional<String> probe() {
            try {
                DMatrix m = new DMatrix(new float[] {0f, 1f}, 2, 1, Float.NaN);
                m.dispose();
                return Optional.empty();
            } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError, XGBoostError: all mean "not here"
                return Optional.of(t.getClass().getSimpleName() + ": " + t.getMessage());
            }
        }
    }

    @Override
    public String name() {
        return "xgboost rank:pairwise";
    }

    @Override
    public boolean fitted() {
        return booster != null;
    }

    @Override
    public void fit(List<CostSample> samples) {
        if (!RankLabels.enough(samples)) return;
        // rank groups must be contiguous rows
        List<CostSample> rows = new ArrayList<>(samples);
        rows.sort(Comparator.comparing(CostSample::group));
        double[] label = RankLabels.of(rows);
        List<Integer> groups = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            if (i == 0 || !rows.get(i).group().equals(rows.get(i - 1).group())) groups.add(0);
            groups.set(groups.size() - 1, groups.getLast() + 1);
        }
        float[] y = new float[label.length];
        for (int i = 0; i < y.length; i++) y[i] = (float) label[i];
        try {
            DMatrix train = matrix(rows.stream().map(CostSample::features).toList());
            try {
                train.setLabel(y);
                train.setGroup(groups.stream().mapToInt(Integer::intValue).toArray());
                boolean cold = booster == null || rows.size() >= 2 * samplesAtColdFit;
                if (cold) {
                    if (booster != null) booster.dispose();
                    booster = XGBoost.train(train, params(), coldRounds, Map.of(), null, null, null, 0, null);
                    samplesAtColdFit = rows.size();
                } else {
                    // continue from a reloaded copy of the trees: the old learner's rank objective caches the shape of
                    // the matrix it last saw and refuses one with more rows
                    Booster previous = booster;
                    booster = XGBoost.train(train, params(), warmRounds, Map.of(), null, null, null, 0, XGBoost.loadModel(previous.toByteArray("ubj")));
                    previous.dispose();
                }
            } finally {
                train.dispose();
            }
        } catch (XGBoostError | java.io.IOException e) {
            throw new IllegalStateException("xgboost failed to train on " + rows.size() + " samples: " + e.getMessage(), e);
        }
    }

    @Override
    public double[] predict(List<float[]> features) {
        if (!fitted()) throw new IllegalStateException("predict before a fit with two successful samples of one workload");
        if (features.isEmpty()) return new double[0];
        try {
            DMatrix m = matrix(features);
            try {
                float[][] p = booster.predict(m);
                double[] out = new double[p.length];
                for (int i = 0; i < out.length; i++) out[i] = p[i][0];
                return out;
            } finally {
                m.dispose();
            }
        } catch (XGBoostError e) {
            throw new IllegalStateException("xgboost failed to predict " + features.size() + " rows: " + e.getMessage(), e);
        }
    }

    private Map<String, Object> params() {
        Map<String, Object> p = new HashMap<>();
        p.put("objective", "rank:pairwise");
        // every pair of a group counts, not only pairs with its top documents: all configurations matter to a search
        p.put("lambdarank_pair_method", "mean");
        p.put("lambdarank_num_pair_per_sample", 8);
        p.put("max_depth", 3); // AutoTVM's settings: shallow trees, no subsampling
        p.put("gamma", 0.0001);
        p.put("min_child_weight", 1);
        p.put("eta", 0.3);
        p.put("lambda", 1.0);
        p.put("nthread", 1); // the tuner shares the machine with the kernels it measures
        p.put("seed", seed);
        p.put("verbosity", 0);
        return p;
    }

    private static DMatrix matrix(List<float[]> features) throws XGBoostError {
        int d = LoopNestFeatures.length();
        float[] flat = new float[features.size() * d];
        for (int i = 0; i < features.size(); i++) System.arraycopy(features.get(i), 0, flat, i * d, d);
        return new DMatrix(flat, features.size(), d, Float.NaN);
    }
}
