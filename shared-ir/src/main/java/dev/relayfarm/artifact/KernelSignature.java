package dev.relayfarm.artifact;

import java.util.List;

/**
 * What the runtime needs to call a compiled kernel safely: its symbol and its parameters (inputs,
 * then outputs) with static shapes and dtypes, in the order of the C ABI's {@code args} array.
 */
public record KernelSignature(String name, List<TensorSpec> params, int numInputs) {
    public KernelSignature {
        params = List.copyOf(params);
        if (numInputs < 0 || numInputs > params.size()) throw new IllegalArgumentException("kernel " + name + ": numInputs " + numInputs + " out of range");
    }

    public List<TensorSpec> inputs() {
        return params.subList(0, numInputs);
    }

    public List<TensorSpec> outputs() {
        return params.subList(numInputs, params.size());
    }
}
