package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Arrays;
import java.util.List;

/**
 * One reference-kernel check: operator, attributes (as text), inputs, and the hand-computed expected
 * outputs. {@code tupleInput} marks operators whose single argument is a tuple ({@code concatenate},
 * {@code stack}): their kernel gets the fields flattened, their relation one tuple type.
 */
record KernelCase(String op, String attrs, boolean tupleInput, List<NDArray> inputs, List<NDArray> expected) {

    static KernelCase of(String op, String attrs, List<NDArray> inputs, NDArray... expected) {
        return new KernelCase(op, attrs, false, inputs, List.of(expected));
    }

    static KernelCase tuple(String op, String attrs, List<NDArray> fields, NDArray... expected) {
        return new KernelCase(op, attrs, true, fields, List.of(expected));
    }

    static int[] shape(int... dims) {
        return dims;
    }

    /** An array of any dtype from exact small values. */
    static NDArray arr(DType dtype, int[] shape, double... values) {
        return NDArray.fromDoubles(dtype, shape, values);
    }

    static NDArray f32(int[] shape, double... values) {
        return arr(DType.FLOAT32, shape, values);
    }

    static NDArray i32(int[] shape, double... values) {
        return arr(DType.INT32, shape, values);
    }

    static NDArray i64(int[] shape, double... values) {
        return arr(DType.INT64, shape, values);
    }

    /** 0, 1, 2, ... in {@code dtype}, shaped. */
    static NDArray iota(DType dtype, int... shape) {
        NDArray a = NDArray.zeros(dtype, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setLong(i, i);
        return a;
    }

    @Override
    public String toString() {
        return op + "(" + attrs + ") on " + inputs.stream().map(a -> a.dtype() + Arrays.toString(a.shape())).toList();
    }
}
