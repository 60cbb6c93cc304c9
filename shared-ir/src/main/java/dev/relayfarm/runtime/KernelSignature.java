package dev.relayfarm.runtime;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * What the runtime needs to call a compiled kernel safely: its symbol and its parameters (inputs,
 * then outputs) with static shapes and dtypes, in the order of the C ABI's {@code args} array.
 */
public record KernelSignature(String name, List<Param> params, int numInputs) {
    public record Param(String name, List<Integer> shape, DType dtype) {
        public Param {
            shape = List.copyOf(shape);
        }

        public long elementCount() {
            long n = 1;
            for (int d : shape) n *= d;
            return n;
        }

        public long byteSize() {
            return elementCount() * Math.max(1, dtype.bits() / 8);
        }
    }

    public KernelSignature {
        params = List.copyOf(params);
        if (numInputs < 0 || numInputs > params.size()) throw new IllegalArgumentException("kernel " + name + ": numInputs " + numInputs + " out of range");
    }

    public List<Param> inputs() {
        return params.subList(0, numInputs);
    }

    public List<Param> outputs() {
        return params.subList(numInputs, params.size());
    }
}
