package dev.relayfarm.vta.tuning;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.vta.DeadlockException;
import dev.relayfarm.vta.VtaProgramException;
import dev.relayfarm.vta.compile.BufferCapacityException;
import dev.relayfarm.vta.compile.LayerLowering;
import dev.relayfarm.vta.compile.LoweredLayer;
import dev.relayfarm.vta.compile.VtaSchedule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Measures VTA schedules on the SIMULATOR: each config is lowered, run once on the task's seeded input (the cycle model
 * is deterministic and, for a fixed layer, data-independent, so one run is the measurement: cv 0, number and repeat 1)
 * and its output compared bit for bit with the interpreter's int8 result of the layer's Relay region. So a schedule
 * that computes something else is a WRONG_ANSWER record, never a fast one. Failures, by kind:
 * <ul>
 *   <li>COMPILE_ERROR: the config is not a schedule of the layer, or its tiles do not fit a buffer (the message names it);
 *   <li>RUNTIME_ERROR: the simulator refused the program (a deadlock of the dependency queues, an instruction out of range);
 *   <li>WRONG_ANSWER: the output differs from the reference (the first differing element is named).
 * </ul>
 * The cost is {@link VtaTarget#costUs} of the simulated cycles. What it does not do: time anything real.
 *
 * <p>The last task's input and reference output are kept: a task's rounds share them, and the interpreter's run of a
 * large layer costs more than simulating a schedule.
 */
public final class SimulatorMeasurer implements LayerMeasurer {
    /** The reference of one task: its input and the interpreter's output on it. */
    private record Reference(VtaLayerTask task, NDArray input, NDArray expected) {
    }

    private Reference last;

    @Override
    public MeasuredBatch measureWithBaseline(VtaLayerTask task, List<ScheduleConfig> configs) {
        Reference ref = reference(task);
        Measurement baseline = measure(task, task.defaultConfig(), ref.input(), ref.expected());
        if (!baseline.ok()) throw new BaselineFailedException(baseline);
        List<Measurement> out = new ArrayList<>();
        for (ScheduleConfig c : configs) out.add(measure(task, c, ref.input(), ref.expected()));
        return new MeasuredBatch(baseline, out);
    }

    /** Measures {@code configs} without a baseline: one measurement each, failures included. */
    public List<Measurement> measure(VtaLayerTask task, List<ScheduleConfig> configs) {
        Reference ref = reference(task);
        return configs.stream().map(c -> measure(task, c, ref.input(), ref.expected())).toList();
    }

    /** The task's reference, computed once while the same task object comes back (a record's equality would compare whole IR). */
    private synchronized Reference reference(VtaLayerTask task) {
        if (last == null || last.task() != task) {
            NDArray input = task.input();
            last = new Reference(task, input, task.expected(input));
        }
        return last;
    }

    private static Measurement measure(VtaLayerTask task, ScheduleConfig config, NDArray input, NDArray expected) {
        String key = task.key();
        LoweredLayer lowered;
        try {
            VtaSchedule s = task.schedule(config);
            lowered = LayerLowering.lower(task.layer(), s, task.config());
        } catch (BufferCapacityException e) {
            return failure(key, config, MeasureError.COMPILE_ERROR, "schedule does not fit: " + e.getMessage());
        } catch (IllegalArgumentException e) { // not a schedule of this layer (InvalidConfigException), or one lowering refuses
            return failure(key, config, MeasureError.COMPILE_ERROR, e.getMessage());
        }
        LoweredLayer.Run run;
        try {
            run = lowered.run(input);
        } catch (DeadlockException | VtaProgramException e) {
            return failure(key, config, MeasureError.RUNTIME_ERROR, "simulator: " + e.getMessage());
        }
        String mismatch = difference(expected, run.output());
        if (mismatch != null) return failure(key, config, MeasureError.WRONG_ANSWER, mismatch);
        return new Measurement(key, config, new Measurement.Cost(VtaTarget.costUs(run.stats().totalCycles()), 0.0, 1, 1));
    }

    /** Null when equal bit for bit, else what differs (dtype, shape, or the first differing element). */
    private static String difference(NDArray want, NDArray got) {
        if (!want.dtype().equals(got.dtype())) return "output dtype " + got.dtype() + ", the interpreter's " + want.dtype();
        if (!Arrays.equals(want.shape(), got.shape())) return "output shape " + Arrays.toString(got.shape()) + ", the interpreter's " + Arrays.toString(want.shape());
        if (got.contentEquals(want)) return null;
        int n = NDArray.elementCount(want.dtype(), want.shape());
        int differing = 0, first = -1;
        for (int i = 0; i < n; i++) {
            if (want.getLong(i) != got.getLong(i)) {
                differing++;
                if (first < 0) first = i;
            }
        }
        return differing + " of " + n + " output elements differ from the interpreter's int8 result; the first, #" + first + ": " + got.getLong(first)
                + " instead of " + want.getLong(first);
    }

    private static Measurement failure(String key, ScheduleConfig config, MeasureError error, String detail) {
        return new Measurement(key, config, new Measurement.Failure(error, detail));
    }
}
