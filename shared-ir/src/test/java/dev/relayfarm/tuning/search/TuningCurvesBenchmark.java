package dev.relayfarm.tuning.search;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Tuning curves on real timings (issue #15: best cost against trials for at least 4 workloads, xgb against GA against
 * random; the cost model should reach random search's final best in at most half its trials, median over the
 * workloads). Not a unit test: disabled unless asked for, and it needs an idle machine.
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=TuningCurvesBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.trials=64] [-Drelayfarm.bench.workloads=conv1x1,3x3/2]
 * </pre>
 * Each workload is a convolution of the shape real models have (ResNet's 3×3 and 1×1 convolutions, SqueezeNet's expand
 * layer, a strided convolution). Every strategy runs {@code trials} trials in batches of
 * 8 with its own seed; the runner measures each distinct config once per workload (1 thread, {@link
 * MeasureOptions#DEFAULT}: warm-up, 20 ms repeats, the median of 5, cache flushed), and every strategy proposing it
 * later reads that same measurement, so the strategies are compared on one set of numbers rather than on each one's
 * luck with the noise. "Reached" means within 2% of random's final best (the records' noise margin: two configs within
 * it are not told apart by one measurement).
 */
class TuningCurvesBenchmark {
    private static final int BATCH = 8;
    private static final double MARGIN = 1.02;
    private static final List<String> STRATEGIES = List.of(RandomSearch.NAME, GeneticSearch.NAME, ModelGuidedSearch.NAME);

    /** Workload name → a one-layer Relay module. */
    static final Map<String, String> WORKLOADS = workloads();

    private static Map<String, String> workloads() {
        Map<String, String> w = new LinkedHashMap<>();
        w.put("conv3x3 64x28x28->64", conv(64, 28, 64, 3, 1, 1));
        w.put("conv1x1 128x28x28->256", conv(128, 28, 256, 1, 1, 0));
        w.put("conv3x3 16x56x56->64", conv(16, 56, 64, 3, 1, 1));
        w.put("conv3x3/2 32x56x56->64", conv(32, 56, 64, 3, 2, 1));
        return w;
    }

    /** A conv2d + bias + relu layer: {@code c} input channels of {@code hw}×{@code hw}, {@code k} filters of {@code r}×{@code r}. */
    static String conv(int c, int hw, int k, int r, int stride, int pad) {
        return String.format(Locale.ROOT, """
                #[version = "0.0.5"]
                def @main(%%x: Tensor[(1, %d, %d, %d), float32], %%w: Tensor[(%d, %d, %d, %d), float32], %%b: Tensor[(%d), float32]) {
                  nn.relu(nn.bias_add(nn.conv2d(%%x, %%w, strides=[%d, %d], padding=[%d, %d, %d, %d], channels=%d, kernel_size=[%d, %d]), %%b))
                }
                """, c, hw, hw, k, c, r, r, k, stride, stride, pad, pad, pad, pad, k, r, r);
    }

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void curves() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        int trials = Integer.getInteger("relayfarm.bench.trials", 64);
        SandboxedRunner runner = new SandboxedRunner(CCompiler.host().orElseThrow(), MeasureOptions.DEFAULT.withThreads(1));
        List<Double> xgbShare = new ArrayList<>(), gaShare = new ArrayList<>(), xgbExact = new ArrayList<>(), gaExact = new ArrayList<>();
        StringBuilder summary = new StringBuilder();
        List<String> only = List.of(System.getProperty("relayfarm.bench.workloads", "").split(",")).stream().filter(t -> !t.isBlank()).toList();
        for (Map.Entry<String, String> w : WORKLOADS.entrySet()) {
            if (!only.isEmpty() && only.stream().noneMatch(w.getKey()::contains)) continue;
            TuningTask task = TuningModels.task(w.getValue(), "nn.contrib_conv2d");
            MemoizedObjective objective = new MemoizedObjective(runner, task);
            Map<String, double[]> curves = new LinkedHashMap<>();
            Map<String, Long> millis = new LinkedHashMap<>();
            for (int k = 0; k < STRATEGIES.size(); k++) {
                String s = STRATEGIES.get(k);
                long start = System.nanoTime();
                // a seed of its own: the genetic search's first generation is random, and with random's seed it would be random's first batch
                curves.put(s, objective.run(SearchStrategies.create(s, task, 7 + k), trials));
                millis.put(s, (System.nanoTime() - start) / 1_000_000);
            }
            double randomBest = last(curves.get(RandomSearch.NAME));
            System.out.printf(Locale.ROOT, "%n%s (%s; space %d configs; default %.1f us; %d distinct configs measured (the default included): median %.1f us, slowest %.1f us,"
                    + " %d failed; wall ms %s)%n", w.getKey(), task.key(), task.space().size(), objective.defaultUs(), objective.measured(),
                    objective.quantile(0.5), objective.quantile(1), objective.failed(), millis);
            System.out.printf("%-8s", "trials");
            for (String s : STRATEGIES) System.out.printf("%12s", s);
            System.out.println();
            for (int t : checkpoints(trials)) {
                System.out.printf("%-8d", t);
                for (String s : STRATEGIES) System.out.printf(Locale.ROOT, "%12.1f", curves.get(s)[Math.min(t, curves.get(s).length) - 1]);
                System.out.println();
            }
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-26s %8.1f %10.1f", w.getKey(), objective.defaultUs(), randomBest));
            for (String s : STRATEGIES) {
                int near = reached(curves.get(s), randomBest * MARGIN), exact = reached(curves.get(s), randomBest);
                row.append(String.format(Locale.ROOT, " %10s", text(near, trials) + "/" + text(exact, trials)));
                if (s.equals(GeneticSearch.NAME)) {
                    gaShare.add(share(near, trials));
                    gaExact.add(share(exact, trials));
                }
                if (s.equals(ModelGuidedSearch.NAME)) {
                    xgbShare.add(share(near, trials));
                    xgbExact.add(share(exact, trials));
                }
            }
            summary.append(row).append('\n');
        }
        System.out.printf("%ntrials to reach random's final best: within 2%% / exactly (the same measurement or a lower one)%n");
        System.out.printf("%-26s %8s %10s", "workload", "default", "random best");
        for (String s : STRATEGIES) System.out.printf(" %10s", s);
        System.out.println();
        System.out.print(summary);
        if (gaShare.isEmpty()) throw new IllegalArgumentException("no workload matches -Drelayfarm.bench.workloads=" + only + " (workloads: " + WORKLOADS.keySet() + ")");
        System.out.printf(Locale.ROOT, "as a share of random's %d trials, median over the workloads: ga %s / %s, xgb %s / %s (target <= 50%%)%n",
                trials, percent(median(gaShare)), percent(median(gaExact)), percent(median(xgbShare)), percent(median(xgbExact)));
    }

    /** The trial count (1-based) at which {@code curve} first comes down to {@code target}, or -1. */
    private static int reached(double[] curve, double target) {
        for (int t = 0; t < curve.length; t++) if (curve[t] <= target) return t + 1;
        return -1;
    }

    /** A strategy that never reaches the target within the budget counts as +∞ (it needs more than the budget). */
    private static double share(int reached, int trials) {
        return reached < 0 ? Double.POSITIVE_INFINITY : reached / (double) trials;
    }

    private static String percent(double share) {
        return Double.isFinite(share) ? String.format(Locale.ROOT, "%.0f%%", 100 * share) : ">100%";
    }

    private static String text(int reached, int trials) {
        return reached < 0 ? ">" + trials : Integer.toString(reached);
    }

    private static double last(double[] curve) {
        return curve[curve.length - 1];
    }

    private static int[] checkpoints(int trials) {
        return IntStream.concat(IntStream.of(8, 16, 24, 32, 48, 64, 96, 128, 192, 256).filter(t -> t < trials), IntStream.of(trials)).toArray();
    }

    private static double median(List<Double> v) {
        double[] s = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Real measurements of one task, each distinct config measured once (beside the default) and then reused. */
    private static final class MemoizedObjective {
        private final SandboxedRunner runner;
        private final TuningTask task;
        private final Map<ScheduleConfig, Measurement> measured = new HashMap<>();
        private double defaultUs = Double.NaN;

        MemoizedObjective(SandboxedRunner runner, TuningTask task) {
            this.runner = runner;
            this.task = task;
        }

        /** Runs {@code s} for {@code trials} trials (fewer if its space runs out); its best-so-far curve. */
        double[] run(SearchStrategy s, int trials) {
            while (s.history().trials() < trials && !s.exhausted()) {
                List<ScheduleConfig> batch = s.next(Math.min(BATCH, trials - s.history().trials()));
                List<ScheduleConfig> fresh = batch.stream().filter(c -> !measured.containsKey(c) && !c.equals(task.defaultConfig())).toList();
                if (!fresh.isEmpty() || Double.isNaN(defaultUs)) {
                    MeasuredBatch b = runner.measureWithBaseline(task, fresh);
                    if (Double.isNaN(defaultUs)) {
                        defaultUs = b.baselineUs();
                        measured.put(task.defaultConfig(), b.baseline());
                    }
                    for (Measurement m : b.results()) measured.put(m.config(), m);
                }
                s.observe(batch.stream().map(measured::get).toList());
            }
            return s.history().curve();
        }

        double defaultUs() {
            return defaultUs;
        }

        int measured() {
            return measured.size();
        }

        int failed() {
            return (int) measured.values().stream().filter(m -> !m.ok()).count();
        }

        /** The {@code q}-quantile of the successful measurements' costs. */
        double quantile(double q) {
            double[] c = measured.values().stream().filter(Measurement::ok).mapToDouble(Measurement::costUs).sorted().toArray();
            return c[(int) Math.min(c.length - 1, Math.floor(q * c.length))];
        }
    }
}
