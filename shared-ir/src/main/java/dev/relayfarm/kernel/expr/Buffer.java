package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A dense row-major array of elements: a kernel argument, an intermediate or a local tile. Loads and
 * stores index it with one expression per dimension; the C emitter flattens them. The id keeps two
 * buffers with the same name apart.
 */
public record Buffer(String name, List<Integer> shape, DType dtype, long id) {
    private static final AtomicLong NEXT = new AtomicLong();

    public Buffer {
        shape = List.copyOf(shape);
        for (int d : shape) if (d <= 0) throw new IllegalArgumentException("buffer " + name + ": dimensions must be positive, got " + shape);
    }

    public static Buffer of(String name, List<Integer> shape, DType dtype) {
        return new Buffer(name, shape, dtype, NEXT.incrementAndGet());
    }

    /** The same buffer identity is not kept: a re-shaped copy (a tile of a compute_at stage) is a new buffer. */
    public Buffer withShape(List<Integer> newShape) {
        return of(name, newShape, dtype);
    }

    public long elementCount() {
        long n = 1;
        for (int d : shape) n *= d;
        return n;
    }

    public int rank() {
        return shape.size();
    }
}
