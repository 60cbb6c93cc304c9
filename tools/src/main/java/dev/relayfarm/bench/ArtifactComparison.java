package dev.relayfarm.bench;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.scheduler.ModelGuard;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The {@link ModelGuard}'s clock: the optimized module compiled with its template defaults once, and with each set of
 * tuned configs asked about, the two artifacts timed side by side in this process ({@link SideBySide#alternate}: blocks
 * of runs in turn, each in its own steady state) on the same seeded inputs; medians in milliseconds.
 */
public final class ArtifactComparison implements ModelGuard.ModelTimer, AutoCloseable {
    private static final int WARMUP = 3;
    /** Each artifact is timed for at least this long per comparison (more runs than asked for a model of microseconds). */
    private static final double MIN_MS = 1000;
    /** Many short rounds rather than {@link SideBySide#BLOCKS} long ones: see {@link ModelGuard.Comparison}. */
    private static final int ROUNDS = 20;

    private final IRModule optimized;
    private final CompileOptions defaults;
    private final int threads, runs;
    private final Path dir;
    private CompiledRunner untuned;
    private List<NDArray> inputs;
    private int compared;

    /**
     * Artifacts go to folders under {@code dir}; {@code threads} as the model will run (0: all online CPUs), {@code runs}
     * timed runs of each artifact per comparison, or more to fill a second.
     */
    public ArtifactComparison(IRModule optimized, Target target, int optLevel, int threads, int runs, Path dir) {
        if (runs < 1) throw new IllegalArgumentException("runs must be at least 1, got " + runs);
        this.optimized = optimized;
        this.defaults = new CompileOptions(target, optLevel, Map.of());
        this.threads = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        this.runs = runs;
        this.dir = dir;
    }

    @Override
    public ModelGuard.Comparison compare(Map<String, ScheduleConfig> configs) {
        if (untuned == null) {
            untuned = load(defaults, "untuned");
            inputs = BenchInputs.random(untuned.model().inputs(), 42);
        }
        compared++;
        try (CompiledRunner tuned = load(new CompileOptions(defaults.target(), defaults.optLevel(), configs), "tuned-" + compared)) {
            int n = SideBySide.runsFor(untuned, inputs, runs, MIN_MS);
            double[][] t = SideBySide.alternate(List.of(untuned, tuned), inputs, WARMUP, n, ROUNDS);
            List<Double> rounds = Arrays.stream(SideBySide.roundRatios(t[0], t[1], ROUNDS)).boxed().toList();
            return new ModelGuard.Comparison(configs.keySet(), SideBySide.percentile(t[0], 0.5), SideBySide.percentile(t[1], 0.5), n, rounds);
        }
    }

    private CompiledRunner load(CompileOptions options, String name) {
        Path out = dir.resolve(name);
        Stages.codegen(optimized, options, out);
        return CompiledRunner.load(out, threads, "relayfarm-c-" + name);
    }

    @Override
    public void close() {
        if (untuned != null) untuned.close();
    }
}
