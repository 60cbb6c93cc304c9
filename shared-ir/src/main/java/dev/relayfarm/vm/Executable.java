package dev.relayfarm.vm;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.Optional;

/**
 * What the VM compiler produces and the VM runs (the dissertation's "executable"): the bytecode of every
 * function, the constant pool, the kernels the bytecode calls with {@link Instruction.InvokePacked} (their
 * C signatures; the machine code lives in a separate kernel library), and the ADT constructor tags. It is
 * plain data: {@link ExecutableFormat} writes it into an artifact beside lib.so and reads it back.
 */
public record Executable(List<VmFunction> functions, List<NDArray> constants, List<KernelSignature> kernels, List<ConstructorTag> constructors) {
    public Executable {
        functions = List.copyOf(functions);
        constants = List.copyOf(constants);
        kernels = List.copyOf(kernels);
        constructors = List.copyOf(constructors);
    }

    /** The index of the function called {@code name}, if any. */
    public Optional<Integer> functionIndex(String name) {
        for (int i = 0; i < functions.size(); i++) if (functions.get(i).name().equals(name)) return Optional.of(i);
        return Optional.empty();
    }

    /** Instructions over all functions: the size the benchmark and the limits talk about. */
    public int instructionCount() {
        return functions.stream().mapToInt(f -> f.code().size()).sum();
    }
}
