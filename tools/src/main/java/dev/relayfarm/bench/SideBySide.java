package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import java.util.Arrays;
import java.util.List;

/**
 * Runs two engines on the same inputs alternately in one process (ours, then the reference, then
 * ours...), after warm-up, so frequency changes and background load hit both alike; reports median
 * and p90 latency of each, their ratio, and how far the outputs differ.
 */
public final class SideBySide {
    private SideBySide() {}

    public record Result(String model, String ours, String reference, int threads, int iterations,
                         double oursMedianMs, double oursP90Ms, double refMedianMs, double refP90Ms, double maxAbsDiff) {
        /** Ours over the reference: below 1 means we are faster. */
        public double ratio() {
            return oursMedianMs / refMedianMs;
        }

        public String toJson() {
            return String.format(java.util.Locale.ROOT,
                    "{\"model\":\"%s\",\"ours\":\"%s\",\"reference\":\"%s\",\"threads\":%d,\"iterations\":%d,\"ours_ms\":%.4f,\"ours_p90_ms\":%.4f,"
                            + "\"ort_ms\":%.4f,\"ort_p90_ms\":%.4f,\"ratio\":%.4f,\"max_abs_diff\":%s}",
                    model, ours, reference, threads, iterations, oursMedianMs, oursP90Ms, refMedianMs, refP90Ms, ratio(),
                    Double.isFinite(maxAbsDiff) ? String.format(java.util.Locale.ROOT, "%.3e", maxAbsDiff) : "null");
        }
    }

    public static Result measure(String model, ModelRunner ours, ModelRunner reference, List<NDArray> inputs, int threads,
                                 int warmup, int iterations) {
        if (iterations < 1) throw new IllegalArgumentException("iterations must be at least 1, got " + iterations);
        List<NDArray> a = ours.run(inputs);
        List<NDArray> b = reference.run(inputs);
        double diff = maxAbsDiff(a, b, model);
        for (int i = 0; i < warmup; i++) {
            ours.run(inputs);
            reference.run(inputs);
        }
        double[] t1 = new double[iterations];
        double[] t2 = new double[iterations];
        for (int i = 0; i < iterations; i++) {
            long s = System.nanoTime();
            ours.run(inputs);
            long m = System.nanoTime();
            reference.run(inputs);
            long e = System.nanoTime();
            t1[i] = (m - s) / 1e6;
            t2[i] = (e - m) / 1e6;
        }
        return new Result(model, ours.name(), reference.name(), threads, iterations,
                percentile(t1, 0.5), percentile(t1, 0.9), percentile(t2, 0.5), percentile(t2, 0.9), diff);
    }

    /** Largest absolute difference over all outputs; outputs of different count or shape are an error naming them. */
    static double maxAbsDiff(List<NDArray> a, List<NDArray> b, String model) {
        if (a.size() != b.size()) throw new IllegalStateException(model + ": " + a.size() + " outputs against the reference's " + b.size());
        double max = 0;
        for (int k = 0; k < a.size(); k++) {
            NDArray x = a.get(k), y = b.get(k);
            if (!Arrays.equals(x.shape(), y.shape())) {
                throw new IllegalStateException(model + ": output " + k + " has shape " + Arrays.toString(x.shape()) + ", the reference "
                        + Arrays.toString(y.shape()));
            }
            for (int i = 0; i < x.elementCount(); i++) {
                double d = Math.abs(x.getDouble(i) - y.getDouble(i));
                if (Double.isNaN(d)) d = Double.isNaN(x.getDouble(i)) && Double.isNaN(y.getDouble(i)) ? 0 : Double.POSITIVE_INFINITY;
                max = Math.max(max, d);
            }
        }
        return max;
    }

    static double percentile(double[] xs, double q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int i = (int) Math.ceil(q * s.length) - 1;
        return s[Math.max(0, Math.min(s.length - 1, i))];
    }
}
