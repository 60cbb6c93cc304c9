package dev.relayfarm.artifact;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * A named tensor of static shape and dtype that compiled code reads or writes: a kernel parameter
 * ({@link KernelSignature}), a graph input, output, parameter or intermediate (the artifact's manifest). A kernel over
 * dynamic rows (kernel/lower/RowKernels) has {@value #DYNAMIC} as the leading dimension of its row-carrying parameters:
 * their sizes count one row, the least such a buffer holds.
 */
public record TensorSpec(String name, List<Integer> shape, DType dtype) {
    /** A dimension known only when the kernel runs. */
    public static final int DYNAMIC = -1;

    public TensorSpec {
        shape = List.copyOf(shape);
        for (int d : shape) if (d < 0 && d != DYNAMIC) throw new IllegalArgumentException("tensor " + name + ": dimension " + d + " in " + shape);
    }

    /** Whether a dimension is {@link #DYNAMIC}. */
    public boolean isDynamic() {
        return shape.contains(DYNAMIC);
    }

    /** Elements, a dynamic dimension counted as one. */
    public long elementCount() {
        long n = 1;
        for (int d : shape) n *= d == DYNAMIC ? 1 : d;
        return n;
    }

    /** Bytes of a dense row-major buffer (bool takes a byte per element); the least bytes when the shape is dynamic. */
    public long byteSize() {
        return elementCount() * dtype.storageBytes() * dtype.lanes();
    }

    public int[] shapeArray() {
        return shape.stream().mapToInt(Integer::intValue).toArray();
    }
}
