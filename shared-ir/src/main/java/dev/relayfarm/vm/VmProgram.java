package dev.relayfarm.vm;

import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.runtime.KernelLibrary;
import java.util.List;
import java.util.Optional;

/**
 * What {@link VmCompiler} produces: the executable and the kernels its {@link Instruction.InvokePacked}
 * instructions call, lowered and ready for the C compiler (in {@link Executable#kernels()} order), and @main's
 * parameters as a manifest lists them (a parameter that is not a static tensor has a null shape and its type as dtype).
 */
public record VmProgram(Executable executable, List<LoweredKernel> kernels, List<Manifest.Tensor> inputs) {
    public VmProgram {
        kernels = List.copyOf(kernels);
        inputs = List.copyOf(inputs);
    }

    /** The kernels as one C translation unit. */
    public CModule kernelModule() {
        return new CModule(kernels.stream().map(LoweredKernel::func).toList());
    }

    /** Compiles the kernels with {@code compiler} (a program without tensor operators needs none) and loads a VM. */
    public VirtualMachine load(CCompiler compiler) {
        return load(compiler, VmOptions.DEFAULT);
    }

    public VirtualMachine load(CCompiler compiler, VmOptions options) {
        // bound to the executable's signatures: a row kernel's say which dimensions are dynamic, its loop nest cannot
        Optional<KernelLibrary> lib = kernels.isEmpty() ? Optional.empty()
                : Optional.of(KernelLibrary.load(compiler.compile(kernelModule().source()), executable.kernels()));
        return new VirtualMachine(executable, lib, options);
    }
}
