package dev.relayfarm.compile;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import java.util.List;

/**
 * The dataflow of an optimized @main as a straight-line program over buffers: the distinct fused
 * kernels (structurally equal Primitive functions share one), the parameters (constants) and the
 * intermediates (temps) with their static types, and the steps in a valid execution order.
 */
public record GraphPlan(List<TensorSpec> inputs, List<TensorSpec> outputs, List<Kernel> kernels,
                        List<TensorSpec> paramSpecs, List<NDArray> params, List<TensorSpec> temps, List<Step> steps) {
    /** A distinct kernel: its symbol and the Primitive function it is lowered from. */
    public record Kernel(String name, Function primitive) {}

    public GraphPlan {
        inputs = List.copyOf(inputs);
        outputs = List.copyOf(outputs);
        kernels = List.copyOf(kernels);
        paramSpecs = List.copyOf(paramSpecs);
        params = List.copyOf(params);
        temps = List.copyOf(temps);
        steps = List.copyOf(steps);
    }

    public TensorSpec spec(Slot slot) {
        return switch (slot) {
            case Slot.Input in -> inputs.get(in.index());
            case Slot.Param p -> paramSpecs.get(p.index());
            case Slot.Temp t -> temps.get(t.id());
            case Slot.Output o -> outputs.get(o.index());
        };
    }

    /** Sum of the sizes of all intermediates: what execution would need without buffer reuse. */
    public long tempBytes() {
        long n = 0;
        for (TensorSpec t : temps) n += t.byteSize();
        return n;
    }
}
