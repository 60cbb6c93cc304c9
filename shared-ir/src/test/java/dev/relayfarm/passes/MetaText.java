package dev.relayfarm.passes;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Base64;

/**
 * Builds the {@code #[metadata]} section for pass tests written as Relay text, so tensor constants
 * ({@code meta[relay.Constant][i]}) can be given by value: {@code MetaText.of(f32(new int[] {2}, 1, 2))}.
 */
public final class MetaText {
    private MetaText() {}

    public static String of(NDArray... constants) {
        StringBuilder sb = new StringBuilder("\n#[metadata]\n{\"relay.Constant\": [\n");
        for (int i = 0; i < constants.length; i++) {
            NDArray a = constants[i];
            sb.append("{\"dtype\": \"").append(a.dtype()).append("\", \"shape\": ").append(java.util.Arrays.toString(a.shape()))
                    .append(", \"data\": \"").append(Base64.getEncoder().encodeToString(a.toBytes())).append("\"}")
                    .append(i + 1 < constants.length ? ",\n" : "\n");
        }
        return sb.append("]}\n").toString();
    }

    public static NDArray f32(int[] shape, double... values) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, values);
    }

    /** A float32 tensor of the given shape holding a deterministic spread of values in [-1, 1]. */
    public static NDArray spread(long seed, int... shape) {
        java.util.Random r = new java.util.Random(seed);
        double[] v = new double[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < v.length; i++) v[i] = Math.round((r.nextDouble() * 2 - 1) * 100) / 100.0;
        return f32(shape, v);
    }
}
