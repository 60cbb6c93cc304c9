package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.ElementwiseKernels.BinaryFn;
import dev.relayfarm.ops.ElementwiseKernels.Domain;
import java.util.Arrays;
import java.util.function.DoubleBinaryOperator;
import java.util.function.LongBinaryOperator;

/**
 * Reference kernels of the reductions. They walk the input with {@link BroadcastLoop}, using the
 * keepdims-shaped accumulator as the broadcast operand: its reduced axes have stride 0, so every
 * input element meets the accumulator slot it folds into, in one pass and without index arithmetic
 * per element.
 *
 * <p>Floating-point inputs accumulate in double (float16/bfloat16/float32 results are rounded
 * once at the end, slightly more accurate than a float32 accumulator); integers accumulate in
 * long, which wraps exactly like the fixed-width sum once narrowed.
 */
final class ReductionKernels {
    private ReductionKernels() {}

    /** A commutative fold: its identity and combine function per domain. */
    enum Fold {
        SUM(0, 0, 0, Double::sum, Long::sum, Long::sum),
        PROD(1, 1, 1, (a, b) -> a * b, (a, b) -> a * b, (a, b) -> a * b),
        MAX(Double.NEGATIVE_INFINITY, Long.MIN_VALUE, 0, Math::max, Math::max,
                (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b),
        MIN(Double.POSITIVE_INFINITY, Long.MAX_VALUE, -1L, Math::min, Math::min,
                (a, b) -> Long.compareUnsigned(a, b) <= 0 ? a : b);

        final double realIdentity;
        final long signedIdentity;
        final long unsignedIdentity;
        final DoubleBinaryOperator real;
        final LongBinaryOperator signed;
        final LongBinaryOperator unsigned;

        Fold(double realIdentity, long signedIdentity, long unsignedIdentity, DoubleBinaryOperator real,
             LongBinaryOperator signed, LongBinaryOperator unsigned) {
            this.realIdentity = realIdentity;
            this.signedIdentity = signedIdentity;
            this.unsignedIdentity = unsignedIdentity;
            this.real = real;
            this.signed = signed;
            this.unsigned = unsigned;
        }
    }

    /** The input shape with reduced axes set to 1: the accumulator's layout. */
    static int[] keepShape(int[] shape, int[] axes) {
        int[] keep = shape.clone();
        for (int a : axes) keep[a] = 1;
        return keep;
    }

    static int[] outShape(int[] shape, int[] axes, boolean keepdims) {
        if (keepdims) return keepShape(shape, axes);
        boolean[] reduced = new boolean[shape.length];
        for (int a : axes) reduced[a] = true;
        int[] out = new int[shape.length - axes.length];
        int k = 0;
        for (int i = 0; i < shape.length; i++) if (!reduced[i]) out[k++] = shape[i];
        return out;
    }

    /** Number of input elements folded into each output element. */
    static long count(int[] shape, int[] axes) {
        long n = 1;
        for (int a : axes) n *= shape[a];
        return n;
    }

    /**
     * Folds {@code x} over {@code axes}; with {@code divisor > 0} each result is then divided by it
     * (mean, variance): exactly for floats, truncating toward zero for integers as Relay's integer
     * {@code mean} does.
     */
    static NDArray fold(String op, NDArray x, int[] axes, boolean keepdims, Fold f, long divisor) {
        DType t = x.dtype();
        Domain domain = ElementwiseKernels.domain(t);
        int[] shape = x.shape();
        int[] keep = keepShape(shape, axes);
        int[] out = outShape(shape, axes, keepdims);
        int outSize = NDArray.elementCount(t, out);
        int[][] operands = {keep};
        switch (domain) {
            case F32, F64, HALF -> {
                double[] acc = new double[outSize];
                Arrays.fill(acc, f.realIdentity);
                DoubleBinaryOperator g = f.real;
                if (domain == Domain.F32) {
                    float[] src = x.floatData();
                    BroadcastLoop.walk(shape, operands, (n, o, off, st) -> {
                        int s = st[0];
                        for (int k = 0, j = off[0]; k < n; k++, j += s) acc[j] = g.applyAsDouble(acc[j], src[o + k]);
                    });
                } else {
                    double[] src = domain == Domain.F64 ? x.doubleData() : ElementwiseKernels.toDoubles(x);
                    BroadcastLoop.walk(shape, operands, (n, o, off, st) -> {
                        int s = st[0];
                        for (int k = 0, j = off[0]; k < n; k++, j += s) acc[j] = g.applyAsDouble(acc[j], src[o + k]);
                    });
                }
                if (divisor != 1) for (int j = 0; j < outSize; j++) acc[j] /= divisor;
                return ElementwiseKernels.fromDoubles(t, out, acc);
            }
            case SIGNED, UNSIGNED -> {
                boolean unsigned = domain == Domain.UNSIGNED;
                long[] acc = new long[outSize];
                Arrays.fill(acc, unsigned ? f.unsignedIdentity : f.signedIdentity);
                LongBinaryOperator g = unsigned ? f.unsigned : f.signed;
                long[] src = ElementwiseKernels.widen(x);
                BroadcastLoop.walk(shape, operands, (n, o, off, st) -> {
                    int s = st[0];
                    for (int k = 0, j = off[0]; k < n; k++, j += s) acc[j] = g.applyAsLong(acc[j], src[o + k]);
                });
                if (divisor != 1) {
                    if (divisor <= 0) throw new ArithmeticException(op + ": integer division by zero (nothing to average)");
                    for (int j = 0; j < outSize; j++) acc[j] = unsigned ? Long.divideUnsigned(acc[j], divisor) : acc[j] / divisor;
                }
                return ElementwiseKernels.narrow(t, out, acc);
            }
        }
        throw new IllegalStateException();
    }

    private static final BinaryFn SUBTRACT = new BinaryFn((a, b) -> a - b, (a, b) -> a - b, (a, b) -> a - b);
    private static final BinaryFn MULTIPLY = new BinaryFn((a, b) -> a * b, (a, b) -> a * b, (a, b) -> a * b);

    /**
     * Relay's {@code variance(data, mean)}: sum((data − mean)²) / (N − unbiased), where {@code mean}
     * broadcasts against {@code data} (normally the keepdims mean over the same axes).
     */
    static NDArray variance(String op, NDArray data, NDArray mean, int[] axes, boolean keepdims, boolean unbiased) {
        NDArray diff = ElementwiseKernels.binary(op, data, mean, SUBTRACT);
        NDArray squared = ElementwiseKernels.binary(op, diff, diff, MULTIPLY);
        long divisor = count(data.shape(), axes) - (unbiased ? 1 : 0);
        return fold(op, squared, axes, keepdims, Fold.SUM, divisor);
    }

    /**
     * argmax/argmin: the row-major index within the reduced axes of the first extreme element (the
     * last one with {@code selectLast}); int32 result. NaN never wins a comparison, so it is chosen
     * only when a whole slice is NaN (index 0).
     */
    static NDArray argReduce(NDArray x, int[] axes, boolean keepdims, boolean isMax, boolean selectLast) {
        Domain domain = ElementwiseKernels.domain(x.dtype());
        int[] shape = x.shape();
        int[] keep = keepShape(shape, axes);
        // The input shape with the kept axes set to 1: its offset is the index within the reduced axes.
        int[] within = new int[shape.length];
        Arrays.fill(within, 1);
        for (int a : axes) within[a] = shape[a];
        int[] out = outShape(shape, axes, keepdims);
        int outSize = NDArray.elementCount(DType.INT32, out);
        int[] index = new int[outSize];
        int[][] operands = {keep, within};
        switch (domain) {
            case F32, F64, HALF -> {
                double[] src = ElementwiseKernels.toDoubles(x);
                double[] best = new double[outSize];
                Arrays.fill(best, isMax ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY);
                BroadcastLoop.walk(shape, operands, (n, o, off, st) -> {
                    for (int k = 0, j = off[0], w = off[1]; k < n; k++, j += st[0], w += st[1]) {
                        double v = src[o + k];
                        boolean better = isMax ? v > best[j] : v < best[j];
                        if (better || (selectLast && v == best[j])) {
                            best[j] = v;
                            index[j] = w;
                        }
                    }
                });
            }
            case SIGNED, UNSIGNED -> {
                boolean unsigned = domain == Domain.UNSIGNED;
                long[] src = ElementwiseKernels.widen(x);
                long[] best = new long[outSize];
                Arrays.fill(best, isMax ? (unsigned ? 0 : Long.MIN_VALUE) : (unsigned ? -1L : Long.MAX_VALUE));
                int direction = isMax ? 1 : -1;
                BroadcastLoop.walk(shape, operands, (n, o, off, st) -> {
                    for (int k = 0, j = off[0], w = off[1]; k < n; k++, j += st[0], w += st[1]) {
                        long v = src[o + k];
                        int c = direction * (unsigned ? Long.compareUnsigned(v, best[j]) : Long.compare(v, best[j]));
                        if (c > 0 || (selectLast && c == 0)) {
                            best[j] = v;
                            index[j] = w;
                        }
                    }
                });
            }
        }
        return NDArray.wrap(DType.INT32, out, index);
    }
}
