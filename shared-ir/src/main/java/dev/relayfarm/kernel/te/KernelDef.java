package dev.relayfarm.kernel.te;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A kernel to lower: its inputs and its outputs (the C function's parameters, in this order). Every
 * compute reachable from the outputs belongs to the kernel; each becomes a stage of the schedule.
 */
public record KernelDef(String name, List<Placeholder> inputs, List<Compute> outputs) {
    public KernelDef {
        inputs = List.copyOf(inputs);
        outputs = List.copyOf(outputs);
        if (outputs.isEmpty()) throw new IllegalArgumentException("kernel " + name + " has no outputs");
        Set<String> names = new HashSet<>();
        for (Tensor t : inputs) if (!names.add(t.name())) throw new IllegalArgumentException("kernel " + name + ": two parameters named " + t.name());
        for (Tensor t : outputs) if (!names.add(t.name())) throw new IllegalArgumentException("kernel " + name + ": two parameters named " + t.name());
    }
}
