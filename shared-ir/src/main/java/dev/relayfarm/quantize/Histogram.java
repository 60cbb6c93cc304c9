package dev.relayfarm.quantize;

/**
 * A histogram of |x| over {@code [0, max]} in equal bins, and the clipping thresholds calibration derives from it:
 * a percentile, and TensorRT's KL-divergence choice (the threshold whose {@code levels}-level quantization loses the
 * least information about the clipped distribution). Mutable while it is filled, by its owner only.
 */
public final class Histogram {
    private final double max;
    private final double width;
    private final long[] counts;
    private long total;

    public Histogram(double max, int bins) {
        if (!(max > 0) || bins < 1) throw new IllegalArgumentException("a histogram needs a positive range and bins, got max " + max + ", " + bins + " bins");
        this.max = max;
        this.width = max / bins;
        this.counts = new long[bins];
    }

    /** Adds |v| for every value; values beyond {@code max} count in the last bin. */
    public void addAbs(float[] values) {
        int last = counts.length - 1;
        for (float v : values) {
            double a = Math.abs((double) v);
            int b = a >= max ? last : (int) (a / width);
            counts[Math.min(b, last)]++;
        }
        total += values.length;
    }

    public long total() {
        return total;
    }

    public int bins() {
        return counts.length;
    }

    public double binWidth() {
        return width;
    }

    /** The upper edge of the first bin at which at least {@code percentile}% of the values lie at or below it. */
    public double percentile(double percentile) {
        if (total == 0) return max;
        double want = percentile / 100.0 * total;
        long cum = 0;
        for (int i = 0; i < counts.length; i++) {
            cum += counts[i];
            if (cum >= want) return (i + 1) * width;
        }
        return max;
    }

    /**
     * TensorRT's entropy calibration: for each candidate {@code i} in {@code [levels, bins]}, P is the first
     * {@code i} bins with every count beyond folded into bin {@code i - 1} (values clipped to the threshold), Q
     * the same bins merged into {@code levels} groups and spread back evenly over each group's non-empty bins;
     * the threshold is the upper edge of bin {@code i - 1} for the {@code i} minimizing KL(P || Q) (both
     * normalized, zero entries smoothed as MXNet and TVM do). With fewer than {@code levels} bins it is {@code max}.
     */
    public double klThreshold(int levels) {
        int n = counts.length;
        if (total == 0 || n <= levels) return max;
        long[] suffix = new long[n + 1];
        for (int i = n - 1; i >= 0; i--) suffix[i] = suffix[i + 1] + counts[i];
        double best = Double.POSITIVE_INFINITY;
        int bestI = n;
        double[] p = new double[n], q = new double[n];
        for (int i = levels; i <= n; i++) {
            for (int k = 0; k < i; k++) p[k] = counts[k];
            p[i - 1] += suffix[i];
            java.util.Arrays.fill(q, 0, i, 0);
            for (int j = 0; j < levels; j++) {
                int start = (int) ((long) j * i / levels), end = (int) ((long) (j + 1) * i / levels);
                double sum = 0;
                int nonzero = 0;
                for (int k = start; k < end; k++) {
                    sum += counts[k];
                    if (counts[k] != 0) nonzero++;
                }
                if (nonzero == 0) continue;
                double each = sum / nonzero;
                for (int k = start; k < end; k++) if (counts[k] != 0) q[k] = each;
            }
            double kl = divergence(p, q, i);
            if (kl < best) {
                best = kl;
                bestI = i;
            }
        }
        return bestI * width;
    }

    /** KL(P || Q) over the first {@code n} entries, both normalized and smoothed. */
    static double divergence(double[] p, double[] q, int n) {
        double[] ps = smooth(p, n), qs = smooth(q, n);
        if (ps == null || qs == null) return Double.POSITIVE_INFINITY;
        double kl = 0;
        for (int k = 0; k < n; k++) if (ps[k] > 0) kl += ps[k] * Math.log(ps[k] / qs[k]);
        return kl;
    }

    /** Normalized, with {@code eps} moved onto every zero entry from the non-zero ones (null when all are zero). */
    static double[] smooth(double[] d, int n) {
        final double eps = 1e-4;
        double sum = 0;
        int zeros = 0;
        for (int k = 0; k < n; k++) {
            sum += d[k];
            if (d[k] == 0) zeros++;
        }
        int nonzeros = n - zeros;
        if (sum <= 0 || nonzeros == 0) return null;
        double take = eps * zeros / nonzeros;
        double[] out = new double[n];
        for (int k = 0; k < n; k++) {
            double v = d[k] / sum;
            out[k] = d[k] == 0 ? eps : v - take;
        }
        // Where a non-zero entry is smaller than what smoothing takes, keep it positive (a tiny probability).
        for (int k = 0; k < n; k++) if (out[k] <= 0) out[k] = eps * 1e-3;
        return out;
    }
}
