package dev.relayfarm.train;

import dev.relayfarm.ir.NDArray;
import java.util.List;

/** Plain gradient descent: {@code w -= lr * g}. */
public record Sgd(double lr) implements Optimizer {
    @Override
    public void apply(List<NDArray> params, List<NDArray> grads) {
        for (int p = 0; p < params.size(); p++) {
            NDArray w = params.get(p), g = grads.get(p);
            for (int i = 0; i < w.elementCount(); i++) w.setDouble(i, w.getDouble(i) - lr * g.getDouble(i));
        }
    }
}
