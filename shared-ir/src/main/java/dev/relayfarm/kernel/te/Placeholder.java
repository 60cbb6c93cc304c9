package dev.relayfarm.kernel.te;

import dev.relayfarm.ir.DType;
import java.util.List;

/** A kernel input with a static shape. */
public record Placeholder(String name, List<Integer> shape, DType dtype, long id) implements Tensor {
    public Placeholder {
        shape = List.copyOf(shape);
        for (int d : shape) if (d <= 0) throw new IllegalArgumentException("placeholder " + name + ": dimensions must be positive, got " + shape);
    }
}
