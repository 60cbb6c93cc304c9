package dev.relayfarm.quantize;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Random;

/**
 * Seeded mnist-like inputs (1x1x28x28 in [0, 1]) for mnist8, as there is no MNIST data here; public so the
 * benchmarks in tools calibrate and check on the same images as {@code QuantizeMnistTest}.
 * {@code digits}: 2-4 bright strokes, two pixels wide, over faint noise in [0, 0.1) (what MNIST digits look like);
 * otherwise uniform [0, 1) noise like the model's shipped test input, every other seed with 1-3 strokes drawn in so
 * the classes vary.
 */
public final class DigitImages {
    private DigitImages() {}

    public static NDArray image(boolean digit, long seed) {
        Random r = new Random(seed);
        float[] v = new float[28 * 28];
        for (int i = 0; i < v.length; i++) v[i] = digit ? 0.1f * r.nextFloat() : r.nextFloat();
        if (digit || seed % 2 == 0) {
            int strokes = digit ? 2 + r.nextInt(3) : 1 + r.nextInt(3);
            for (int s = 0; s < strokes; s++) {
                double x0 = 4 + r.nextInt(20), y0 = 4 + r.nextInt(20), x1 = 4 + r.nextInt(20), y1 = 4 + r.nextInt(20);
                for (int t = 0; t <= 40; t++) {
                    int x = (int) Math.round(x0 + (x1 - x0) * t / 40.0), y = (int) Math.round(y0 + (y1 - y0) * t / 40.0);
                    for (int dy = 0; dy < 2; dy++) for (int dx = 0; dx < 2; dx++) v[Math.min(27, y + dy) * 28 + Math.min(27, x + dx)] = 1f;
                }
            }
        }
        return NDArray.wrap(DType.FLOAT32, new int[] {1, 1, 28, 28}, v);
    }
}
