package dev.relayfarm.artifact;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * A named tensor of static shape and dtype that compiled code reads or writes: a kernel parameter
 * ({@link KernelSignature}), a graph input, output, parameter or intermediate (the artifact's manifest).
 */
public record TensorSpec(String name, List<Integer> shape, DType dtype) {
    public TensorSpec {
        shape = List.copyOf(shape);
    }

    public long elementCount() {
        long n = 1;
        for (int d : shape) n *= d;
        return n;
    }

    /** Bytes of a dense row-major buffer (bool takes a byte per element). */
    public long byteSize() {
        return elementCount() * dtype.storageBytes() * dtype.lanes();
    }

    public int[] shapeArray() {
        return shape.stream().mapToInt(Integer::intValue).toArray();
    }
}
