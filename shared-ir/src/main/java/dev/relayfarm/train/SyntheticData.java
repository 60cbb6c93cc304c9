package dev.relayfarm.train;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A seeded classification set for examples and tests: each class has a random template of the sample shape, and a
 * sample is its class's template plus Gaussian noise; labels are one-hot. Separable but not trivially (noise 0.8 of
 * the templates' unit scale), so a model's loss has somewhere to go.
 */
public final class SyntheticData {
    private SyntheticData() {}

    /** {@code samples} rows shaped like {@code x} (its first dimension replaced) and one-hot labels shaped like {@code y}. */
    public static Map<String, NDArray> classification(String xName, TensorType x, String yName, TensorType y, int samples, long seed) {
        int[] xs = x.staticShape(), ys = y.staticShape();
        if (ys.length != 2) throw new IllegalArgumentException("labels %" + yName + " must be (batch, classes), got " + y);
        int classes = ys[1];
        xs[0] = samples;
        ys[0] = samples;
        int row = 1;
        for (int i = 1; i < xs.length; i++) row *= xs[i];
        SplittableRandom random = new SplittableRandom(seed);
        double[][] templates = new double[classes][row];
        for (double[] t : templates) for (int i = 0; i < row; i++) t[i] = random.nextGaussian();
        NDArray data = NDArray.zeros(x.dtype(), xs), labels = NDArray.zeros(y.dtype(), ys);
        for (int s = 0; s < samples; s++) {
            int c = random.nextInt(classes);
            labels.setDouble(s * classes + c, 1);
            for (int i = 0; i < row; i++) data.setDouble(s * row + i, templates[c][i] + 0.8 * random.nextGaussian());
        }
        Map<String, NDArray> out = new LinkedHashMap<>();
        out.put(xName, data);
        out.put(yName, labels);
        return out;
    }
}
