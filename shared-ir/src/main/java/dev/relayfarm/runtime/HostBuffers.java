package dev.relayfarm.runtime;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.NDArray;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * How {@link NativeKernel} and {@link CompiledModel} hand {@link NDArray}s to native code: arguments
 * are checked against their {@link TensorSpec}s (count, dtype, shape), copied into 64-byte aligned
 * native buffers (what the generated C assumes), and results are copied back into fresh arrays. The VM
 * (dev.relayfarm.vm) moves its inputs, constants and results the same way.
 */
public final class HostBuffers {
    private HostBuffers() {}

    /**
     * Errors name the owner ({@code "kernel fused_add_0"}, {@code "model out/mlp"}) on a wrong count,
     * and the input by index and name, after {@code inputPrefix}, on a wrong dtype or shape.
     */
    public static void checkInputs(String owner, String inputPrefix, List<TensorSpec> specs, List<NDArray> args) {
        if (args.size() != specs.size()) {
            throw new IllegalArgumentException(owner + " takes " + specs.size() + " inputs " + specs.stream().map(TensorSpec::name).toList() + ", got " + args.size());
        }
        for (int i = 0; i < specs.size(); i++) {
            TensorSpec s = specs.get(i);
            NDArray a = args.get(i);
            if (!a.dtype().equals(s.dtype())) {
                throw new IllegalArgumentException(inputPrefix + "input " + i + " (" + s.name() + ") must be " + s.dtype() + ", got " + a.dtype());
            }
            if (!Arrays.equals(s.shapeArray(), a.shape())) {
                throw new IllegalArgumentException(inputPrefix + "input " + i + " (" + s.name() + ") must have shape " + s.shape() + ", got " + Arrays.toString(a.shape()));
            }
        }
    }

    /** An uninitialized native buffer for {@code spec} (at least one byte: empty tensors still get an address). */
    public static MemorySegment allocate(Arena arena, TensorSpec spec) {
        return arena.allocate(Math.max(spec.byteSize(), 1), 64);
    }

    /** A native copy of {@code a}, which {@link #checkInputs} has matched with {@code spec}. */
    public static MemorySegment copyIn(Arena arena, TensorSpec spec, NDArray a) {
        MemorySegment seg = allocate(arena, spec);
        MemorySegment.copy(heap(a), 0, seg, 0, spec.byteSize());
        return seg;
    }

    /** A fresh array holding the first {@code spec.byteSize()} bytes of {@code seg}. */
    public static NDArray copyOut(MemorySegment seg, TensorSpec spec) {
        NDArray a = NDArray.zeros(spec.dtype(), spec.shapeArray());
        MemorySegment.copy(seg, 0, heap(a), 0, spec.byteSize());
        return a;
    }

    /** {@code a}'s own storage as a heap segment (no copy). */
    public static MemorySegment heap(NDArray a) {
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
