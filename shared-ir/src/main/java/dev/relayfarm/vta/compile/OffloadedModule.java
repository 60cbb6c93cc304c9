package dev.relayfarm.vta.compile;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.vta.ExecutionStats;
import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A partitioned module ready to run heterogeneously: the CPU part through the interpreter, every {@code vta.layer}
 * call on the accelerator SIMULATOR with its lowered program. {@link #run} returns the result and each offloaded
 * call's cost.
 */
public record OffloadedModule(VtaPartition.Result partition, List<LoweredLayer> lowered) {
    public OffloadedModule {
        lowered = List.copyOf(lowered);
    }

    /** One offloaded call of a run: the layer, the activation it read and its cost. */
    public record LayerCall(LoweredLayer layer, NDArray input, ExecutionStats stats) {
    }

    /** A run's value, its offloaded calls, and the bytes its {@code device_copy}s moved to and from the accelerator. */
    public record Result(Value value, List<LayerCall> calls, long bytesToAccelerator, long bytesToHost) {
        public Result {
            calls = List.copyOf(calls);
        }
    }

    /** Partitions {@code module} and lowers every offloaded layer with the schedule {@code schedules} picks for it. */
    public static OffloadedModule compile(IRModule module, VtaConfig config, Function<QuantizedLayer, VtaSchedule> schedules) {
        VtaPartition.Result p = VtaPartition.partition(module);
        List<LoweredLayer> lowered = new ArrayList<>();
        for (QuantizedLayer layer : p.layers()) lowered.add(LayerLowering.lower(layer, schedules.apply(layer), config));
        return new OffloadedModule(p, lowered);
    }

    public Result run(NDArray... inputs) {
        List<LayerCall> calls = new ArrayList<>();
        OpDef<Integer> vta = new OpDef<>(VtaPartition.OP, 1, attrs -> {
            AttrReader r = new AttrReader(VtaPartition.OP, attrs);
            int layer = r.int32("layer", -1);
            r.finish();
            if (layer < 0 || layer >= lowered.size()) throw new RelationException(VtaPartition.OP + ": no offloaded layer " + layer + " (" + lowered.size() + " compiled)");
            return layer;
        }, (types, n, layer, reporter) -> {
            throw new RelationException(VtaPartition.OP + " is typed by its layer, not by a relation; run it through OffloadedModule");
        }, OpPattern.OPAQUE, (args, layer) -> {
            LoweredLayer.Run run = lowered.get(layer).run(args.get(0));
            calls.add(new LayerCall(lowered.get(layer), args.get(0), run.stats()));
            return List.of(run.output());
        });
        long[] moved = new long[2]; // to the accelerator, to the host
        OpDef<Boolean> copy = new OpDef<>(VtaPartition.DEVICE_COPY, 1, attrs -> {
            AttrReader r = new AttrReader(VtaPartition.DEVICE_COPY, attrs);
            String from = r.string("src_device", ""), to = r.string("dst_device", "");
            r.finish();
            if (!(from.equals(VtaPartition.HOST) && to.equals(VtaPartition.ACCELERATOR) || from.equals(VtaPartition.ACCELERATOR) && to.equals(VtaPartition.HOST))) {
                throw new RelationException(VtaPartition.DEVICE_COPY + ": copies go between " + VtaPartition.HOST + " and " + VtaPartition.ACCELERATOR + ", got " + from + " -> " + to);
            }
            return to.equals(VtaPartition.ACCELERATOR);
        }, (types, n, toAccelerator, reporter) -> {
            reporter.assign(types.get(1), types.get(0));
            return true;
        }, OpPattern.OPAQUE, (args, toAccelerator) -> {
            NDArray x = args.get(0);
            moved[toAccelerator ? 0 : 1] += (long) x.elementCount() * x.dtype().storageBytes();
            return List.of(x);
        });
        Interpreter interpreter = new Interpreter(partition.module(), name -> switch (name) {
            case VtaPartition.OP -> vta;
            case VtaPartition.DEVICE_COPY -> copy;
            default -> OpRegistry.get(name);
        });
        Value value = interpreter.call("main", inputs);
        return new Result(value, calls, moved[0], moved[1]);
    }
}
