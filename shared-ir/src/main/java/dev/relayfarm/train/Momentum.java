package dev.relayfarm.train;

import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.List;

/** Heavy-ball momentum: {@code v = beta * v + g; w -= lr * v}. */
public final class Momentum implements Optimizer {
    private final double lr;
    private final double beta;
    private final List<double[]> velocity = new ArrayList<>();

    public Momentum(double lr, double beta) {
        this.lr = lr;
        this.beta = beta;
    }

    @Override
    public void apply(List<NDArray> params, List<NDArray> grads) {
        for (int p = 0; p < params.size(); p++) {
            NDArray w = params.get(p), g = grads.get(p);
            if (velocity.size() <= p) velocity.add(new double[w.elementCount()]);
            double[] v = velocity.get(p);
            for (int i = 0; i < v.length; i++) {
                v[i] = beta * v[i] + g.getDouble(i);
                w.setDouble(i, w.getDouble(i) - lr * v[i]);
            }
        }
    }
}
