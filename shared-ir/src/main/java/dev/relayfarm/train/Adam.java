package dev.relayfarm.train;

import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.List;

/** Adam (Kingma and Ba) with bias-corrected first and second moments. */
public final class Adam implements Optimizer {
    private final double lr;
    private final double beta1;
    private final double beta2;
    private final double eps;
    private final List<double[]> m = new ArrayList<>();
    private final List<double[]> v = new ArrayList<>();
    private int t;

    public Adam(double lr, double beta1, double beta2, double eps) {
        this.lr = lr;
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.eps = eps;
    }

    @Override
    public void apply(List<NDArray> params, List<NDArray> grads) {
        t++;
        double c1 = 1 - Math.pow(beta1, t), c2 = 1 - Math.pow(beta2, t);
        for (int p = 0; p < params.size(); p++) {
            NDArray w = params.get(p), g = grads.get(p);
            if (m.size() <= p) {
                m.add(new double[w.elementCount()]);
                v.add(new double[w.elementCount()]);
            }
            double[] mp = m.get(p), vp = v.get(p);
            for (int i = 0; i < mp.length; i++) {
                double gi = g.getDouble(i);
                mp[i] = beta1 * mp[i] + (1 - beta1) * gi;
                vp[i] = beta2 * vp[i] + (1 - beta2) * gi * gi;
                w.setDouble(i, w.getDouble(i) - lr * (mp[i] / c1) / (Math.sqrt(vp[i] / c2) + eps));
            }
        }
    }
}
