package dev.relayfarm.tuning.search;

import java.util.List;

/**
 * The pure-Java cost model: ridge regression of log relative throughput ({@link RankLabels}) on the standardized
 * features and their squares (a square lets it find a sweet spot: a tile neither too small nor spilling registers).
 * Failures are placed one unit below the slowest success, so the model learns to avoid them. Used where XGBoost's
 * native library cannot load and in fast tests; deterministic, no state between fits.
 */
public final class RidgeCostModel implements CostModel {
    private final double lambda;
    private double[] mean, scale, weights;
    private double intercept;

    /** {@code lambda}: the L2 penalty on the standardized weights (1 is a sound default). */
    public RidgeCostModel(double lambda) {
        if (!(lambda > 0)) throw new IllegalArgumentException("ridge needs a positive penalty, got " + lambda);
        this.lambda = lambda;
    }

    public RidgeCostModel() {
        this(1.0);
    }

    @Override
    public String name() {
        return "ridge (features and their squares)";
    }

    @Override
    public boolean fitted() {
        return weights != null;
    }

    @Override
    public void fit(List<CostSample> samples) {
        if (!RankLabels.enough(samples)) return;
        double[] label = RankLabels.of(samples);
        double worst = 0;
        for (int i = 0; i < label.length; i++) if (label[i] > 0) worst = Math.min(worst, Math.log(label[i]));
        double[] y = new double[label.length];
        for (int i = 0; i < y.length; i++) y[i] = label[i] > 0 ? Math.log(label[i]) : worst - 1;
        int n = samples.size(), d = LoopNestFeatures.length();
        mean = new double[d];
        scale = new double[d];
        for (CostSample s : samples) for (int j = 0; j < d; j++) mean[j] += s.features()[j] / n;
        for (CostSample s : samples) for (int j = 0; j < d; j++) scale[j] += sq(s.features()[j] - mean[j]) / n;
        for (int j = 0; j < d; j++) scale[j] = scale[j] > 1e-12 ? Math.sqrt(scale[j]) : 0; // a constant feature carries nothing
        double[][] x = new double[n][];
        for (int i = 0; i < n; i++) x[i] = expand(samples.get(i).features());
        double yMean = 0;
        for (double v : y) yMean += v / n;
        int p = 2 * d;
        double[] colMean = new double[p];
        for (double[] row : x) for (int j = 0; j < p; j++) colMean[j] += row[j] / n;
        double[][] a = new double[p][p];
        double[] b = new double[p];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < p; j++) {
                double xj = x[i][j] - colMean[j];
                b[j] += xj * (y[i] - yMean);
                for (int k = 0; k <= j; k++) a[j][k] += xj * (x[i][k] - colMean[k]);
            }
        }
        for (int j = 0; j < p; j++) {
            for (int k = 0; k < j; k++) a[k][j] = a[j][k];
            a[j][j] += lambda;
        }
        weights = solve(a, b);
        intercept = yMean;
        for (int j = 0; j < p; j++) intercept -= weights[j] * colMean[j];
    }

    @Override
    public double[] predict(List<float[]> features) {
        if (!fitted()) throw new IllegalStateException("predict before a fit with two successful samples of one workload");
        double[] out = new double[features.size()];
        for (int i = 0; i < out.length; i++) {
            double[] x = expand(features.get(i));
            double s = intercept;
            for (int j = 0; j < x.length; j++) s += weights[j] * x[j];
            out[i] = s;
        }
        return out;
    }

    /** Standardized features, then their squares. */
    private double[] expand(float[] f) {
        int d = f.length;
        double[] x = new double[2 * d];
        for (int j = 0; j < d; j++) {
            double z = scale[j] == 0 ? 0 : (f[j] - mean[j]) / scale[j];
            x[j] = z;
            x[d + j] = z * z;
        }
        return x;
    }

    private static double sq(double v) {
        return v * v;
    }

    /** {@code a x = b} for a symmetric positive definite {@code a} (Cholesky; the ridge term makes it definite). */
    private static double[] solve(double[][] a, double[] b) {
        int p = b.length;
        double[][] l = new double[p][p];
        for (int i = 0; i < p; i++) {
            for (int j = 0; j <= i; j++) {
                double s = a[i][j];
                for (int k = 0; k < j; k++) s -= l[i][k] * l[j][k];
                l[i][j] = i == j ? Math.sqrt(Math.max(s, 1e-12)) : s / l[j][j];
            }
        }
        double[] z = new double[p];
        for (int i = 0; i < p; i++) {
            double s = b[i];
            for (int k = 0; k < i; k++) s -= l[i][k] * z[k];
            z[i] = s / l[i][i];
        }
        double[] x = new double[p];
        for (int i = p - 1; i >= 0; i--) {
            double s = z[i];
            for (int k = i + 1; k < p; k++) s -= l[k][i] * x[k];
            x[i] = s / l[i][i];
        }
        return x;
    }
}
