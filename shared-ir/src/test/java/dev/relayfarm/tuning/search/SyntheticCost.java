package dev.relayfarm.tuning.search;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A stand-in for measuring, for tests that must be fast and deterministic: the cost of a real task's configuration
 * is a roofline-like function of its real loop-nest features (time = flops at the vector lanes' rate, slowed when the
 * register tile has too few accumulators to hide the FMA latency or too many to fit the registers, when threads get
 * unequal work, and when the innermost loops' working set leaves L1), times seeded log-normal noise (3%).
 * Configurations whose index is a multiple of {@code failEvery} fail as RUNTIME_ERROR (0: none fail).
 */
final class SyntheticCost {
    private final TuningTask task;
    private final double[] cost;
    private final long failEvery;

    SyntheticCost(TuningTask task, long noiseSeed, long failEvery) {
        this.task = task;
        this.failEvery = failEvery;
        TaskFeatures f = new TaskFeatures(task);
        cost = new double[(int) task.space().size()];
        SplittableRandom noise = new SplittableRandom(noiseSeed);
        for (int i = 0; i < cost.length; i++) cost[i] = model(f.of(i).orElseThrow()) * Math.exp(0.03 * gaussian(noise));
    }

    static double raw(float[] v, String name) {
        return Math.pow(2, v[LoopNestFeatures.index(name)]) - 1;
    }

    /** The noiseless cost in µs. */
    static double model(float[] v) {
        double flops = raw(v, "total_flops");
        double lanes = raw(v, "s0.vector_width");
        double vector = lanes == 0 ? 1.0 / 8 : Math.min(lanes, 8) / 8 * (lanes % 8 == 0 || lanes < 8 ? 1 : 0.85);
        double accumulators = Math.ceil(raw(v, "max_local_alloc_elements") / 8);
        double registers = accumulators < 8 ? 8 / Math.max(1, accumulators) : accumulators > 14 ? 1 + 0.15 * (accumulators - 14) : 1;
        double par = Math.max(1, raw(v, "outer_parallel_extent"));
        double balance = Math.ceil(par / 2) / (par / 2);
        double workingSet = raw(v, "s0.bytes_l3");
        double memory = workingSet > 32 * 1024 ? 1.5 : 1;
        double unroll = 1 - 0.03 * Math.min(4, Math.log(1 + raw(v, "s0.unroll_product")) / Math.log(2));
        return flops / (2 * 16e3 * vector) * registers * balance * memory * unroll;
    }

    double cost(long index) {
        return cost[(int) index];
    }

    /** The lowest cost of the space. */
    double optimum() {
        double b = Double.POSITIVE_INFINITY;
        for (int i = 0; i < cost.length; i++) if (!fails(i)) b = Math.min(b, cost[i]);
        return b;
    }

    boolean fails(long index) {
        return failEvery > 0 && index % failEvery == 0;
    }

    List<Measurement> measure(List<ScheduleConfig> configs) {
        List<Measurement> out = new ArrayList<>();
        for (ScheduleConfig c : configs) {
            long i = task.space().indexOf(c);
            Measurement.Outcome o = fails(i) ? new Measurement.Failure(dev.relayfarm.tuning.MeasureError.RUNTIME_ERROR, "synthetic failure")
                    : new Measurement.Cost(cost[(int) i], 0.01, 1, 5);
            out.add(new Measurement(task.key(), c, o));
        }
        return out;
    }

    /** Runs {@code s} until {@code trials} measurements or exhaustion, in batches of {@code batch}. */
    SearchHistory run(SearchStrategy s, int trials, int batch) {
        while (s.history().trials() < trials && !s.exhausted()) s.observe(measure(s.next(Math.min(batch, trials - s.history().trials()))));
        return s.history();
    }

    private static double gaussian(SplittableRandom r) {
        return Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}
