package dev.relayfarm.runtime;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One compiled kernel, callable on {@link NDArray}s: inputs are checked against the signature (count,
 * dtype, shape — a mismatch is an error naming the kernel and the parameter), copied into 64-byte
 * aligned native buffers, the kernel runs, and the outputs come back as fresh arrays.
 */
public final class NativeKernel {
    private final KernelSignature signature;
    private final MethodHandle handle;

    NativeKernel(KernelSignature signature, MethodHandle handle) {
        this.signature = signature;
        this.handle = handle;
    }

    public KernelSignature signature() {
        return signature;
    }

    public List<NDArray> run(List<NDArray> inputs) {
        check(inputs);
        try (Arena arena = Arena.ofConfined()) {
            List<MemorySegment> buffers = new ArrayList<>();
            for (int i = 0; i < signature.params().size(); i++) {
                TensorSpec p = signature.params().get(i);
                MemorySegment seg = arena.allocate(Math.max(p.byteSize(), 1), 64);
                if (i < signature.numInputs()) MemorySegment.copy(heapSegment(inputs.get(i)), 0, seg, 0, p.byteSize());
                buffers.add(seg);
            }
            invoke(arena, buffers);
            List<NDArray> outputs = new ArrayList<>();
            for (int i = signature.numInputs(); i < signature.params().size(); i++) {
                TensorSpec p = signature.params().get(i);
                NDArray out = NDArray.zeros(p.dtype(), p.shape().stream().mapToInt(Integer::intValue).toArray());
                MemorySegment.copy(buffers.get(i), 0, heapSegment(out), 0, p.byteSize());
                outputs.add(out);
            }
            return outputs;
        }
    }

    /**
     * Calls the kernel on native buffers the caller prepared (inputs then outputs, each at least the
     * parameter's size and 64-byte aligned): the entry point for timing without copies.
     */
    public void invoke(List<MemorySegment> buffers) {
        try (Arena arena = Arena.ofConfined()) {
            invoke(arena, buffers);
        }
    }

    private void invoke(Arena arena, List<MemorySegment> buffers) {
        if (buffers.size() != signature.params().size()) {
            throw new IllegalArgumentException("kernel " + signature.name() + " takes " + signature.params().size() + " buffers, got " + buffers.size());
        }
        MemorySegment args = arena.allocate(ValueLayout.ADDRESS, buffers.size());
        for (int i = 0; i < buffers.size(); i++) {
            TensorSpec p = signature.params().get(i);
            MemorySegment b = buffers.get(i);
            if (b.byteSize() < p.byteSize()) throw new IllegalArgumentException("kernel " + signature.name() + ": buffer for " + p.name() + " has " + b.byteSize() + " bytes, needs " + p.byteSize());
            if (b.address() % 64 != 0) throw new IllegalArgumentException("kernel " + signature.name() + ": buffer for " + p.name() + " is not 64-byte aligned");
            args.setAtIndex(ValueLayout.ADDRESS, i, b);
        }
        int rc;
        try {
            rc = (int) handle.invokeExact(args);
        } catch (Throwable t) {
            throw new IllegalStateException("kernel " + signature.name() + " failed to run", t);
        }
        if (rc != 0) throw new IllegalStateException("kernel " + signature.name() + " returned " + rc + " (out of memory for an intermediate buffer)");
    }

    private void check(List<NDArray> inputs) {
        List<TensorSpec> ins = signature.inputs();
        if (inputs.size() != ins.size()) {
            throw new IllegalArgumentException("kernel " + signature.name() + " takes " + ins.size() + " inputs " + ins.stream().map(TensorSpec::name).toList() + ", got " + inputs.size());
        }
        for (int i = 0; i < ins.size(); i++) {
            TensorSpec p = ins.get(i);
            NDArray a = inputs.get(i);
            if (!a.dtype().equals(p.dtype())) {
                throw new IllegalArgumentException("kernel " + signature.name() + ": input " + i + " (" + p.name() + ") must be " + p.dtype() + ", got " + a.dtype());
            }
            int[] expected = p.shape().stream().mapToInt(Integer::intValue).toArray();
            if (!Arrays.equals(expected, a.shape())) {
                throw new IllegalArgumentException("kernel " + signature.name() + ": input " + i + " (" + p.name() + ") must have shape " + Arrays.toString(expected) + ", got " + Arrays.toString(a.shape()));
            }
        }
    }

    private static MemorySegment heapSegment(NDArray a) {
        if (a.dtype().lanes() != 1 || a.dtype().code() == DType.Code.BFLOAT) throw new IllegalArgumentException("unsupported kernel dtype " + a.dtype());
        return switch (a.data()) {
            case float[] f -> MemorySegment.ofArray(f);
            case double[] d -> MemorySegment.ofArray(d);
            case byte[] b -> MemorySegment.ofArray(b);
            case short[] s -> MemorySegment.ofArray(s);
            case int[] i -> MemorySegment.ofArray(i);
            case long[] l -> MemorySegment.ofArray(l);
            default -> throw new IllegalArgumentException("unsupported storage " + a.data().getClass().getSimpleName());
        };
    }
}
