package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Times engines on the same inputs in one process, in turns ({@link #alternate}), after warm-up, so
 * frequency changes and background load hit each alike; {@link #measure} reports median and p90 latency
 * of ours and a reference, their ratio, and how far the outputs differ.
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
        List<NDArray> a = ours.run(inputs);
        List<NDArray> b = reference.run(inputs);
        double diff = maxAbsDiff(a, b, model);
        double[][] t = alternate(List.of(ours, reference), inputs, warmup, iterations);
        return new Result(model, ours.name(), reference.name(), threads, iterations,
                percentile(t[0], 0.5), percentile(t[0], 0.9), percentile(t[1], 0.5), percentile(t[1], 0.9), diff);
    }

    /**
     * Runs {@code runners} on the same inputs ({@code warmup} untimed rounds, then {@code iterations} timed ones), so
     * load and clock changes hit each alike; per runner its latencies in milliseconds. In a round each runner, in a
     * shuffled (seeded) order, runs twice back to back and the second run is timed: each engine is timed in its own
     * steady state (its thread pool awake, its data in cache), as a server running inferences back to back sees it,
     * not in the wake of the engine before it (ONNX Runtime's workers spin for a while after a run, taking the cores
     * from whatever runs next; ours sleep after 20 µs). For a model faster than that spin (under a millisecond) the
     * untimed run does not fully shield the timed one.
     */
    public static double[][] alternate(List<? extends ModelRunner> runners, List<NDArray> inputs, int warmup, int iterations) {
        if (iterations < 1) throw new IllegalArgumentException("iterations must be at least 1, got " + iterations);
        for (int i = 0; i < warmup; i++) for (ModelRunner r : runners) r.run(inputs);
        double[][] t = new double[runners.size()][iterations];
        List<Integer> order = new ArrayList<>(IntStream.range(0, runners.size()).boxed().toList());
        Random random = new Random(42);
        for (int i = 0; i < iterations; i++) {
            Collections.shuffle(order, random);
            for (int k : order) {
                runners.get(k).run(inputs);
                long s = System.nanoTime();
                runners.get(k).run(inputs);
                t[k][i] = (System.nanoTime() - s) / 1e6;
            }
        }
        return t;
    }

    /** Largest absolute difference over all outputs; outputs of different count or shape are an error naming them. */
    public static double maxAbsDiff(List<NDArray> a, List<NDArray> b, String model) {
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

    public static double percentile(double[] xs, double q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int i = (int) Math.ceil(q * s.length) - 1;
        return s[Math.max(0, Math.min(s.length - 1, i))];
    }
}
