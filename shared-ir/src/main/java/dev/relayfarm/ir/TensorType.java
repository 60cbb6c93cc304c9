package dev.relayfarm.ir;

import java.util.List;

/** {@code Tensor[(d0, d1, ...), dtype]}; a scalar has an empty shape and prints as its dtype. */
public record TensorType(List<Dim> shape, DType dtype) implements Type {
    public TensorType {
        shape = List.copyOf(shape);
    }

    public static TensorType scalar(DType dtype) {
        return new TensorType(List.of(), dtype);
    }

    public static TensorType of(DType dtype, long... dims) {
        return new TensorType(java.util.Arrays.stream(dims).mapToObj(Dim::of).toList(), dtype);
    }

    public int rank() {
        return shape.size();
    }

    public boolean isScalar() {
        return shape.isEmpty();
    }

    /** True when every dimension is a known integer. */
    public boolean isStatic() {
        return shape.stream().allMatch(Dim::isStatic);
    }

    /** The static shape as ints; throws if some dimension is not a known integer. */
    public int[] staticShape() {
        int[] s = new int[shape.size()];
        for (int i = 0; i < s.length; i++) s[i] = Math.toIntExact(shape.get(i).value());
        return s;
    }

    @Override
    public String toString() {
        return TypeFormat.format(this);
    }
}
