package dev.relayfarm.runtime;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * One compiled kernel, callable on {@link NDArray}s: inputs are checked against the signature (count,
 * dtype, shape — a mismatch is an error naming the kernel and the parameter), copied into 64-byte
 * aligned native buffers, the kernel runs, and the outputs come back as fresh arrays.
 */
public final class NativeKernel {
    private final KernelSignature signature;
    private final MemorySegment address;
    private final MethodHandle handle;
    /**
     * Each parameter's byte size, computed once: {@link TensorSpec#byteSize} walks a boxed shape list, and the VM
     * checks every buffer of every kernel call against it (profiled: a fifth of the VM's own time on mnist8).
     */
    private final long[] paramBytes;

    NativeKernel(KernelSignature signature, MemorySegment address, MethodHandle handle) {
        this.signature = signature;
        this.address = address;
        this.handle = handle;
        // a dynamic parameter may have no rows at all (an empty arange, no box kept): the VM checks its rows against the row count
        this.paramBytes = signature.params().stream().mapToLong(s -> s.isDynamic() ? 0 : s.byteSize()).toArray();
    }

    public KernelSignature signature() {
        return signature;
    }

    public List<NDArray> run(List<NDArray> inputs) {
        HostBuffers.checkInputs("kernel " + signature.name(), "kernel " + signature.name() + ": ", signature.inputs(), inputs);
        for (TensorSpec p : signature.params()) {
            if (p.dtype().lanes() != 1) throw new IllegalArgumentException("unsupported kernel dtype " + p.dtype());
        }
        try (Arena arena = Arena.ofConfined()) {
            List<MemorySegment> buffers = new ArrayList<>();
            for (int i = 0; i < signature.params().size(); i++) {
                TensorSpec p = signature.params().get(i);
                buffers.add(i < signature.numInputs() ? HostBuffers.copyIn(arena, p, inputs.get(i)) : HostBuffers.allocate(arena, p));
            }
            invoke(arena.allocate(ValueLayout.ADDRESS, buffers.size()), buffers);
            List<NDArray> outputs = new ArrayList<>();
            for (int i = signature.numInputs(); i < signature.params().size(); i++) outputs.add(HostBuffers.copyOut(buffers.get(i), signature.params().get(i)));
            return outputs;
        }
    }

    /**
     * Calls the kernel on native buffers the caller prepared (inputs then outputs, each at least the
     * parameter's size and 64-byte aligned): the entry point for timing without copies.
     */
    public void invoke(List<MemorySegment> buffers) {
        try (Arena arena = Arena.ofConfined()) {
            invoke(arena.allocate(ValueLayout.ADDRESS, buffers.size()), buffers);
        }
    }

    /** The kernel's entry point, {@code int32_t name(void* const* args)}: what a {@link KernelBatch} queues. */
    MemorySegment address() {
        return address;
    }

    /**
     * Checks {@code buffers} against the signature (count, each at least its parameter's size and 64-byte aligned) and
     * writes their addresses into {@code args} from pointer slot {@code slot} on.
     */
    void setArguments(MemorySegment args, long slot, List<MemorySegment> buffers) {
        if (buffers.size() != signature.params().size()) {
            throw new IllegalArgumentException("kernel " + signature.name() + " takes " + signature.params().size() + " buffers, got " + buffers.size());
        }
        if (args.byteSize() < ValueLayout.ADDRESS.byteSize() * (slot + buffers.size())) {
            throw new IllegalArgumentException("kernel " + signature.name() + ": the argument array has room for " + (args.byteSize() / ValueLayout.ADDRESS.byteSize() - slot)
                    + " pointers, needs " + buffers.size());
        }
        for (int i = 0; i < buffers.size(); i++) {
            MemorySegment b = buffers.get(i);
            if (b.byteSize() < paramBytes[i]) {
                throw new IllegalArgumentException("kernel " + signature.name() + ": buffer for " + signature.params().get(i).name() + " has " + b.byteSize() + " bytes, needs " + paramBytes[i]);
            }
            if (b.address() % 64 != 0) throw new IllegalArgumentException("kernel " + signature.name() + ": buffer for " + signature.params().get(i).name() + " is not 64-byte aligned");
            args.setAtIndex(ValueLayout.ADDRESS, slot + i, b);
        }
    }

    /**
     * {@link #invoke(List)} with the caller's array for the argument pointers (room for one address per
     * parameter), so a caller that runs kernels in a loop (the VM) allocates nothing per call.
     */
    public void invoke(MemorySegment args, List<MemorySegment> buffers) {
        setArguments(args, 0, buffers);
        int rc;
        try {
            rc = (int) handle.invokeExact(args);
        } catch (Throwable t) {
            throw new IllegalStateException("kernel " + signature.name() + " failed to run", t);
        }
        if (rc != 0) throw new IllegalStateException("kernel " + signature.name() + " returned " + rc + " (out of memory for an intermediate buffer)");
    }
}
