package dev.relayfarm.compile;

import dev.relayfarm.ir.DType;
import java.util.List;

/** A tensor the compiled graph reads or writes: its name (an input's, a parameter's), static shape and dtype. */
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
