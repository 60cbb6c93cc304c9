package dev.relayfarm.train;

import dev.relayfarm.ir.NDArray;
import java.util.List;

/**
 * An update rule for the trained parameters, applied on the host between gradient steps (the gradient program computes
 * {@code (loss, grads)}; the update is a few flops per parameter, not worth a kernel). Stateful (momentum, Adam's
 * moments), so one instance serves one training run. Arithmetic is in double; parameters are stored back in their dtype.
 */
public sealed interface Optimizer permits Sgd, Momentum, Adam {
    /** Updates {@code params} in place from {@code grads} (same order and shapes). */
    void apply(List<NDArray> params, List<NDArray> grads);

    /** {@code sgd}, {@code momentum} (0.9) or {@code adam} (0.9, 0.999, 1e-8) with learning rate {@code lr}. */
    static Optimizer named(String name, double lr) {
        return switch (name) {
            case "sgd" -> new Sgd(lr);
            case "momentum" -> new Momentum(lr, 0.9);
            case "adam" -> new Adam(lr, 0.9, 0.999, 1e-8);
            default -> throw new IllegalArgumentException("unknown optimizer '" + name + "' (sgd, momentum, adam)");
        };
    }
}
