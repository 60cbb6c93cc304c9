package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.JvmThreads;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Times engines on the same inputs in one process, in rounds of blocks ({@link #alternate}), after warm-up, so
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

        /** One JSON object; times in ms to the nanosecond, so a model of microseconds keeps the digits its ratio came from. */
        public String toJson() {
            return String.format(java.util.Locale.ROOT,
                    "{\"model\":\"%s\",\"ours\":\"%s\",\"reference\":\"%s\",\"threads\":%d,\"iterations\":%d,\"ours_ms\":%.6f,\"ours_p90_ms\":%.6f,"
                            + "\"ort_ms\":%.6f,\"ort_p90_ms\":%.6f,\"ratio\":%.4f,\"max_abs_diff\":%s}",
                    model, ours, reference, threads, iterations, oursMedianMs, oursP90Ms, refMedianMs, refP90Ms, ratio(),
                    Double.isFinite(maxAbsDiff) ? String.format(java.util.Locale.ROOT, "%.3e", maxAbsDiff) : "null");
        }
    }

    public static Result measure(String model, ModelRunner ours, ModelRunner reference, List<NDArray> inputs, int threads,
                                 int warmup, int iterations) {
        List<NDArray> a = ours.run(inputs);
        List<NDArray> b = reference.run(inputs);
        double diff = maxAbsDiff(a, b, model);
        settle(List.of(ours, reference), inputs);
        double[][] t = alternate(List.of(ours, reference), inputs, warmup, iterations);
        return new Result(model, ours.name(), reference.name(), threads, iterations,
                percentile(t[0], 0.5), percentile(t[0], 0.9), percentile(t[1], 0.5), percentile(t[1], 0.9), diff);
    }

    /** Blocks of timed runs per engine: enough to spread drift over both engines, few enough to keep each block long. */
    static final int BLOCKS = 5;

    /**
     * Runs {@code runners} on the same inputs and returns, per runner, its {@code iterations} latencies in milliseconds.
     * The runs come in up to {@link #BLOCKS} rounds; in each round every runner, in a shuffled (seeded) order, runs
     * {@code warmup} untimed runs (at least one: a paused engine restarts untimed), then its share of the timed runs
     * back to back, then {@link ModelRunner#pause pauses}.
     * So each engine is timed in its own steady state (its thread pool awake, its data in cache), as a server running
     * inferences back to back sees it, and never beside the other engine's background threads: ONNX Runtime's workers
     * keep spinning after a run, and on this 2-core machine they took up to half of the cores from an engine run right
     * after it (msra_teams_seg, ours: 1.81 ms alone, 3.15 ms interleaved with ONNX Runtime, 2.19 ms with ORT's spinning
     * switched off), so interleaving engines measured the spin, not the engine. Rounds spread slow drift (frequency, load)
     * over all engines alike.
     */
    public static double[][] alternate(List<? extends ModelRunner> runners, List<NDArray> inputs, int warmup, int iterations) {
        return alternate(runners, inputs, warmup, iterations, BLOCKS);
    }

    /** {@link #alternate(List, List, int, int)} in up to {@code rounds} rounds instead of {@link #BLOCKS}. */
    public static double[][] alternate(List<? extends ModelRunner> runners, List<NDArray> inputs, int warmup, int iterations, int rounds) {
        if (iterations < 1) throw new IllegalArgumentException("iterations must be at least 1, got " + iterations);
        if (rounds < 1) throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
        double[][] t = new double[runners.size()][iterations];
        List<Integer> order = new ArrayList<>(IntStream.range(0, runners.size()).boxed().toList());
        Random random = new Random(42);
        int blocks = Math.min(rounds, iterations), done = 0;
        for (int b = 0; b < blocks; b++) {
            int runs = (iterations - done) / (blocks - b);
            Collections.shuffle(order, random);
            for (int k : order) {
                ModelRunner r = runners.get(k);
                for (int i = 0; i < Math.max(1, warmup); i++) r.run(inputs);
                for (int i = 0; i < runs; i++) {
                    long s = System.nanoTime();
                    r.run(inputs);
                    t[k][done + i] = (System.nanoTime() - s) / 1e6;
                }
                r.pause();
            }
            done += runs;
        }
        return t;
    }

    /**
     * Runs every engine, untimed and in turn, until the JVM's JIT compiler threads are idle
     * ({@link JvmThreads#awaitIdle}), then pauses them. Timed right after compiling, the OCR recognizer through the VM
     * measured 1.48x its pinned graph executor at width 160 on 2 threads; loaded from disk into a fresh JVM, 1.15x.
     * {@link #measure} settles before it times; a harness that compiles and then calls {@link #alternate} should too.
     * Returns the rounds it ran.
     */
    public static int settle(List<? extends ModelRunner> runners, List<NDArray> inputs) {
        int rounds = JvmThreads.awaitIdle(() -> {
            for (ModelRunner r : runners) r.run(inputs);
        });
        for (ModelRunner r : runners) r.pause();
        return rounds;
    }

    /**
     * Per round of {@link #alternate} in {@code rounds} rounds (the same split of its {@code iterations}), the median of
     * {@code b}'s runs over the median of {@code a}'s: how two engines compared in each round, their blocks run next to
     * each other in time.
     */
    public static double[] roundRatios(double[] a, double[] b, int rounds) {
        if (a.length != b.length || a.length == 0) throw new IllegalArgumentException("rounds need runs of the same, non-zero count: " + a.length + " and " + b.length);
        int blocks = Math.min(rounds, a.length), done = 0;
        double[] ratios = new double[blocks];
        for (int r = 0; r < blocks; r++) {
            int runs = (a.length - done) / (blocks - r);
            ratios[r] = percentile(Arrays.copyOfRange(b, done, done + runs), 0.5) / percentile(Arrays.copyOfRange(a, done, done + runs), 0.5);
            done += runs;
        }
        return ratios;
    }

    /** The most runs {@link #runsFor} asks for: bounds the time of a model of microseconds whose estimate came out too low. */
    static final int MAX_RUNS = 20_000;

    /**
     * How many timed runs make at least {@code minRuns} and at least {@code minMs} of {@code runner}'s time: a model of
     * tens of microseconds timed 30 times is timed for a millisecond, which one interrupt or page fault decides. Three
     * runs (after one untimed) estimate its time.
     */
    public static int runsFor(ModelRunner runner, List<NDArray> inputs, int minRuns, double minMs) {
        runner.run(inputs);
        double[] t = new double[3];
        for (int i = 0; i < t.length; i++) {
            long s = System.nanoTime();
            runner.run(inputs);
            t[i] = (System.nanoTime() - s) / 1e6;
        }
        double ms = Math.max(percentile(t, 0.5), 1e-3);
        return (int) Math.min(MAX_RUNS, Math.max(minRuns, Math.ceil(minMs / ms)));
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
