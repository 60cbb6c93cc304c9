package dev.relayfarm.ir;

/** A tensor literal. Compared by identity; see {@link Expr}. */
public record Constant(NDArray data, Span span) implements Expr {
    public Constant(NDArray data) {
        this(data, Span.NONE);
    }

    public TensorType type() {
        int[] s = data.shape();
        long[] dims = new long[s.length];
        for (int i = 0; i < s.length; i++) dims[i] = s[i];
        return TensorType.of(data.dtype(), dims);
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return "Constant(" + data + ")";
    }
}
