package dev.relayfarm.interp;

import dev.relayfarm.ir.NDArray;
import java.util.Objects;

/** A tensor. Compares by identity of the array, like {@link NDArray}; use {@code contentEquals} for contents. */
public record TensorValue(NDArray data) implements Value {
    public TensorValue {
        Objects.requireNonNull(data, "data");
    }

    @Override
    public String toString() {
        return data.toString();
    }
}
