package dev.relayfarm.tuning.scheduler;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transfer on real timings (issue #15: a model tuned after another of similar layers reaches 90% of its final speed in
 * at most 30% of the trials it needs from scratch). Not a unit test: disabled unless asked for, and it needs an idle
 * machine.
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=TransferBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.trials=96]
 * </pre>
 * Two three-layer CNNs with the same channel widths at different resolutions (A: 32×32, B: 16×16), so their
 * workloads differ but their templates and good channel blockings are alike. B is tuned from scratch; A is tuned;
 * then B again, with A's records as prior records (the {@link Tuner}'s transfer: each of B's tasks first measures
 * the configs that beat their default on A's workloads of its template). Both B runs use the same seed, strategy
 * (xgb), batch (4) and trial budget, over the three convolutions; "speed" is their estimated time per model run, each run against its own measured
 * defaults (so run-to-run drift cancels). The target is 90% of the gain the scratch run found by its end (time at most
 * default − 0.9 × (default − final)): 90% of the final speed itself would be met by the defaults whenever tuning gains
 * less than 11%.
 */
class TransferBenchmark {
    static final String A = cnn(32), B = cnn(16);

    /** conv3x3 32→32, conv1x1 32→64, conv3x3 64→64, each with bias and relu, on a 32-channel {@code hw}×{@code hw} input. */
    static String cnn(int hw) {
        return String.format(Locale.ROOT, """
                #[version = "0.0.5"]
                def @main(%%x: Tensor[(1, 32, %d, %d), float32], %%w1: Tensor[(32, 32, 3, 3), float32], %%b1: Tensor[(32), float32],
                          %%w2: Tensor[(64, 32, 1, 1), float32], %%b2: Tensor[(64), float32], %%w3: Tensor[(64, 64, 3, 3), float32], %%b3: Tensor[(64), float32]) {
                  %%0 = nn.relu(nn.bias_add(nn.conv2d(%%x, %%w1, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]), %%b1));
                  %%1 = nn.relu(nn.bias_add(nn.conv2d(%%0, %%w2, padding=[0, 0, 0, 0], channels=64, kernel_size=[1, 1]), %%b2));
                  nn.relu(nn.bias_add(nn.conv2d(%%1, %%w3, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]), %%b3))
                }
                """, hw, hw);
    }

    /** After each round: trials so far and the model's estimated speedup over its defaults (NaN until every task has a round). */
    private record Point(int trials, double speedup) {}

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void tunedAfterASimilarModel(@TempDir Path dir) throws IOException {
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler");
        int trials = Integer.getInteger("relayfarm.bench.trials", 96);
        SandboxedRunner runner = new SandboxedRunner(cc, MeasureOptions.DEFAULT.withThreads(1));
        RecordContext context = RecordContext.local(Target.host(), cc);
        Tuner.Options options = new Tuner.Options("xgb", 4, trials, null, 1, trials);

        List<Point> scratch = tune(B, runner, context, options, dir.resolve("b-scratch.jsonl"), List.of());
        tune(A, runner, context, options, dir.resolve("a.jsonl"), List.of());
        List<TuningRecord> fromA = RecordFile.read(dir.resolve("a.jsonl"));
        List<Point> transfer = tune(B, runner, context, options, dir.resolve("b-transfer.jsonl"), fromA);

        double finalSpeedup = scratch.getLast().speedup();
        // 90% of the gain: time <= default - 0.9 (default - final), i.e. 1/speedup <= 1 - 0.9 (1 - 1/final)
        double target = 1 / (1 - 0.9 * (1 - 1 / finalSpeedup));
        // no gain from scratch: every run "reaches" it at its first complete estimate, and the ratio would mean nothing
        boolean gained = finalSpeedup > 1;
        int fromScratch = gained ? reached(scratch, target) : -1, transferred = gained ? reached(transfer, target) : -1;
        System.out.printf("%n%-6s %22s %22s%n", "round", "B from scratch", "B after A");
        for (int i = 0; i < Math.max(scratch.size(), transfer.size()); i++) {
            System.out.printf(Locale.ROOT, "%-6d %22s %22s%n", i + 1, i < scratch.size() ? point(scratch.get(i)) : "", i < transfer.size() ? point(transfer.get(i)) : "");
        }
        System.out.printf(Locale.ROOT, "A's records: %d, of which %d beat their default%n", fromA.size(), fromA.stream().filter(TuningRecord::fasterThanDefault).count());
        System.out.printf(Locale.ROOT, "B from scratch: final speedup %.3fx after %d trials; 90%% of its gain (%.3fx) at trial %s; after A: at trial %s; "
                + "ratio %s (target <= 30%%); final speedup after A %.3fx%n", finalSpeedup, scratch.getLast().trials(), target, text(fromScratch),
                text(transferred), fromScratch > 0 && transferred > 0 ? String.format(Locale.ROOT, "%.0f%%", 100.0 * transferred / fromScratch) : "n/a",
                transfer.getLast().speedup());
    }

    private static List<Point> tune(String relay, SandboxedRunner runner, RecordContext context, Tuner.Options options, Path records, List<TuningRecord> prior) {
        IRModule optimized = TuningModels.optimized(relay, Target.host());
        // the convolutions: the weights are parameters here, so their layout transforms are kernels of this module
        // (in an imported model they are constants, folded at compile time)
        List<TuningTask> tasks = Stages.tasks(optimized, Target.host()).stream().filter(t -> t.key().startsWith("nn.contrib_conv2d")).toList();
        List<Point> curve = new ArrayList<>();
        System.out.printf("%s: %s%n", records.getFileName(), tasks.stream().map(t -> t.key() + " (" + t.space().size() + " configs)").toList());
        new Tuner(runner, context, records, options, (task, batch, s) -> curve.add(new Point(s.trials(), s.defaultModelUs() / s.modelUs())))
                .tune(tasks, Tuner.callsPerWorkload(optimized, tasks), prior);
        return curve;
    }

    /** The first trial count at which the speedup reached {@code target}, or -1. */
    private static int reached(List<Point> curve, double target) {
        return curve.stream().filter(p -> p.speedup() >= target).mapToInt(Point::trials).findFirst().orElse(-1);
    }

    private static String point(Point p) {
        return String.format(Locale.ROOT, "%4d trials %8s", p.trials(), Double.isNaN(p.speedup()) ? "-" : String.format(Locale.ROOT, "%.3fx", p.speedup()));
    }

    private static String text(int trials) {
        return trials < 0 ? "never" : Integer.toString(trials);
    }
}
