package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.MiniFloats;
import dev.relayfarm.ir.NDArray;
import java.util.function.DoublePredicate;
import java.util.function.DoubleUnaryOperator;
import java.util.function.DoubleBinaryOperator;
import java.util.function.LongBinaryOperator;
import java.util.function.LongPredicate;
import java.util.function.LongUnaryOperator;

/**
 * The reference kernels of element-wise operators, written once per computation domain rather than
 * once per operator: an operator supplies its scalar functions ({@link BinaryFn}, {@link UnaryFn},
 * ...) and these loops apply them over primitive storage.
 *
 * <p>Domains: float32 and float64 compute on their own arrays (float32 through a double-valued
 * function and a final rounding, which for + - * / and sqrt gives exactly the float32 result);
 * float16 and bfloat16 widen to float32, compute, and round back; integers and bool widen to
 * {@code long} (sign-extended for intN, zero-extended for uintN and bool), compute, and narrow back,
 * which wraps exactly as fixed-width arithmetic does. uint64 values live in a long as raw bits, so
 * operators give a separate {@code unsigned} function where signedness matters (division,
 * comparison, min/max, shifts).
 */
final class ElementwiseKernels {
    private ElementwiseKernels() {}

    /** How a dtype computes (see the class comment). */
    enum Domain { F32, F64, HALF, SIGNED, UNSIGNED }

    @FunctionalInterface
    interface DoubleBiPredicate {
        boolean test(double a, double b);
    }

    @FunctionalInterface
    interface LongBiPredicate {
        boolean test(long a, long b);
    }

    /** A binary function per domain; a null integer function means "floating point only". */
    record BinaryFn(DoubleBinaryOperator real, LongBinaryOperator signed, LongBinaryOperator unsigned) {}

    /** A comparison per domain; its result is bool. */
    record CompareFn(DoubleBiPredicate real, LongBiPredicate signed, LongBiPredicate unsigned,
                     java.util.function.BiPredicate<String, String> text) {}

    /** A unary function per domain; a null integer function means "floating point only". */
    record UnaryFn(DoubleUnaryOperator real, LongUnaryOperator signed, LongUnaryOperator unsigned) {}

    /** A unary test with a bool result ({@code isnan}); the integer test sees the widened value. */
    record PredicateFn(DoublePredicate real, LongPredicate integer) {}

    static Domain domain(DType t) {
        if (t.lanes() != 1) throw new IllegalArgumentException("reference kernels do not support vector dtype " + t);
        return switch (t.code()) {
            case FLOAT -> t.bits() == 32 ? Domain.F32 : t.bits() == 64 ? Domain.F64 : Domain.HALF;
            case BFLOAT, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN -> Domain.HALF;
            case INT -> Domain.SIGNED;
            case UINT, BOOL -> Domain.UNSIGNED;
            case STRING -> throw new IllegalArgumentException("reference kernels of numeric operators do not compute on string tensors");
        };
    }

    static DType sameDtype(String op, NDArray a, NDArray b) {
        if (!a.dtype().equals(b.dtype())) {
            throw new IllegalArgumentException(op + ": dtypes " + a.dtype() + " and " + b.dtype() + " do not match");
        }
        return a.dtype();
    }

    private static IllegalArgumentException notDefined(String op, DType t) {
        return new IllegalArgumentException(op + ": not defined for " + t);
    }

    static NDArray binary(String op, NDArray a, NDArray b, BinaryFn f) {
        DType t = sameDtype(op, a, b);
        Domain domain = domain(t);
        int[] shape = Broadcast.shape(op, a.shape(), b.shape());
        int[][] operands = {a.shape(), b.shape()};
        int n = NDArray.elementCount(t, shape);
        switch (domain) {
            case F32 -> {
                float[] x = a.floatData(), y = b.floatData(), z = new float[n];
                DoubleBinaryOperator g = f.real();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = (float) g.applyAsDouble(x[i], y[j]);
                    }
                });
                return NDArray.wrap(t, shape, z);
            }
            case F64 -> {
                double[] x = a.doubleData(), y = b.doubleData(), z = new double[n];
                DoubleBinaryOperator g = f.real();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = g.applyAsDouble(x[i], y[j]);
                    }
                });
                return NDArray.wrap(t, shape, z);
            }
            case HALF -> {
                return fromFloat32(t, binary(op, toFloat32(a), toFloat32(b), f));
            }
            case SIGNED, UNSIGNED -> {
                LongBinaryOperator g = domain == Domain.SIGNED ? f.signed() : f.unsigned();
                if (g == null) throw notDefined(op, t);
                long[] x = widen(a), y = widen(b), z = new long[n];
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = g.applyAsLong(x[i], y[j]);
                    }
                });
                return narrow(t, shape, z);
            }
        }
        throw new IllegalStateException();
    }

    static NDArray compare(String op, NDArray a, NDArray b, CompareFn f) {
        DType t = sameDtype(op, a, b);
        if (t.isString()) {
            if (f.text() == null) throw notDefined(op, t);
            int[] shape = Broadcast.shape(op, a.shape(), b.shape());
            byte[] z = new byte[NDArray.elementCount(DType.BOOL, shape)];
            String[] x = a.stringData(), y = b.stringData();
            java.util.function.BiPredicate<String, String> g = f.text();
            BroadcastLoop.walk(shape, new int[][] {a.shape(), b.shape()}, (len, o, off, st) -> {
                for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += st[0], j += st[1]) {
                    z[o + k] = g.test(x[i], y[j]) ? (byte) 1 : 0;
                }
            });
            return NDArray.wrap(DType.BOOL, shape, z);
        }
        Domain domain = domain(t);
        int[] shape = Broadcast.shape(op, a.shape(), b.shape());
        int[][] operands = {a.shape(), b.shape()};
        byte[] z = new byte[NDArray.elementCount(DType.BOOL, shape)];
        switch (domain) {
            case F32 -> {
                float[] x = a.floatData(), y = b.floatData();
                DoubleBiPredicate g = f.real();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = g.test(x[i], y[j]) ? (byte) 1 : 0;
                    }
                });
            }
            case F64 -> {
                double[] x = a.doubleData(), y = b.doubleData();
                DoubleBiPredicate g = f.real();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = g.test(x[i], y[j]) ? (byte) 1 : 0;
                    }
                });
            }
            case HALF -> {
                // Widening half types to float32 is exact, so comparing the widened values is exact.
                return compare(op, toFloat32(a), toFloat32(b), f);
            }
            case SIGNED, UNSIGNED -> {
                LongBiPredicate g = domain == Domain.SIGNED ? f.signed() : f.unsigned();
                long[] x = widen(a), y = widen(b);
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    int sa = st[0], sb = st[1];
                    for (int k = 0, i = off[0], j = off[1]; k < len; k++, i += sa, j += sb) {
                        z[o + k] = g.test(x[i], y[j]) ? (byte) 1 : 0;
                    }
                });
            }
        }
        return NDArray.wrap(DType.BOOL, shape, z);
    }

    static NDArray unary(String op, NDArray a, UnaryFn f) {
        DType t = a.dtype();
        Domain domain = domain(t);
        int[] shape = a.shape();
        switch (domain) {
            case F32 -> {
                float[] x = a.floatData(), z = new float[x.length];
                DoubleUnaryOperator g = f.real();
                for (int i = 0; i < x.length; i++) z[i] = (float) g.applyAsDouble(x[i]);
                return NDArray.wrap(t, shape, z);
            }
            case F64 -> {
                double[] x = a.doubleData(), z = new double[x.length];
                DoubleUnaryOperator g = f.real();
                for (int i = 0; i < x.length; i++) z[i] = g.applyAsDouble(x[i]);
                return NDArray.wrap(t, shape, z);
            }
            case HALF -> {
                return fromFloat32(t, unary(op, toFloat32(a), f));
            }
            case SIGNED, UNSIGNED -> {
                LongUnaryOperator g = domain == Domain.SIGNED ? f.signed() : f.unsigned();
                if (g == null) throw notDefined(op, t);
                long[] z = widen(a);
                for (int i = 0; i < z.length; i++) z[i] = g.applyAsLong(z[i]);
                return narrow(t, shape, z);
            }
        }
        throw new IllegalStateException();
    }

    static NDArray predicate(NDArray a, PredicateFn f) {
        Domain domain = domain(a.dtype());
        byte[] z = new byte[a.elementCount()];
        switch (domain) {
            case F32 -> {
                float[] x = a.floatData();
                for (int i = 0; i < x.length; i++) z[i] = f.real().test(x[i]) ? (byte) 1 : 0;
            }
            case F64, HALF -> {
                double[] x = toDoubles(a);
                for (int i = 0; i < x.length; i++) z[i] = f.real().test(x[i]) ? (byte) 1 : 0;
            }
            case SIGNED, UNSIGNED -> {
                long[] x = widen(a);
                for (int i = 0; i < x.length; i++) z[i] = f.integer().test(x[i]) ? (byte) 1 : 0;
            }
        }
        return NDArray.wrap(DType.BOOL, a.shape(), z);
    }

    /**
     * {@code cast}: integer→integer wraps to the target width (C semantics), float→integer truncates
     * toward zero (out-of-range values saturate, as Java's conversion does; C leaves them
     * undefined), anything→bool tests for non-zero, anything→float rounds to nearest.
     */
    static NDArray cast(NDArray a, DType target) {
        return cast(a, target, false, MiniFloats.RoundMode.UP);
    }

    /** {@code cast} with ONNX's options for 8/4-bit float targets (see {@link MiniFloats#encode}). */
    static NDArray cast(NDArray a, DType target, boolean saturate, MiniFloats.RoundMode mode) {
        if (target.isMiniFloat() && !target.equals(a.dtype())) {
            domain(a.dtype());
            MiniFloats.Format f = MiniFloats.format(target);
            double[] d = toDoubles(a);
            byte[] z = new byte[d.length];
            for (int i = 0; i < d.length; i++) z[i] = (byte) MiniFloats.encode(f, d[i], saturate, mode);
            return NDArray.wrap(target, a.shape(), z);
        }
        Domain from = domain(a.dtype());
        Domain to = domain(target);
        int[] shape = a.shape();
        boolean fromInt = from == Domain.SIGNED || from == Domain.UNSIGNED;
        boolean toInt = to == Domain.SIGNED || to == Domain.UNSIGNED;
        if (target.equals(a.dtype())) return a;
        if (fromInt && toInt) {
            long[] z = widen(a);
            if (target.isBool()) for (int i = 0; i < z.length; i++) z[i] = z[i] != 0 ? 1 : 0;
            return narrow(target, shape, z);
        }
        if (!toInt) return fromDoubles(target, shape, toDoubles(a));
        double[] d = toDoubles(a);
        long[] z = new long[d.length];
        for (int i = 0; i < d.length; i++) {
            double v = d[i];
            if (target.isBool()) z[i] = v != 0 ? 1 : 0;
            else if (to == Domain.UNSIGNED && v >= 0x1p63) z[i] = (long) (v - 0x1p63) ^ Long.MIN_VALUE;
            else z[i] = (long) v;
        }
        return narrow(target, shape, z);
    }

    /** {@code where(cond, x, y)} with three-way broadcasting; {@code cond} of any dtype, non-zero is true. */
    static NDArray where(NDArray cond, NDArray x, NDArray y) {
        DType t = sameDtype("where", x, y);
        domain(t);
        int[] shape = Broadcast.shape("where", Broadcast.shape("where", cond.shape(), x.shape()), y.shape());
        int[][] operands = {cond.shape(), x.shape(), y.shape()};
        byte[] c = truth(cond);
        NDArray out = NDArray.zeros(t, shape);
        // Selection copies storage elements as they are, so one loop per storage class serves every dtype.
        switch (out.data()) {
            case float[] z -> {
                float[] a = (float[]) x.data(), b = (float[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            case double[] z -> {
                double[] a = (double[]) x.data(), b = (double[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            case byte[] z -> {
                byte[] a = (byte[]) x.data(), b = (byte[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            case short[] z -> {
                short[] a = (short[]) x.data(), b = (short[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            case int[] z -> {
                int[] a = (int[]) x.data(), b = (int[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            case long[] z -> {
                long[] a = (long[]) x.data(), b = (long[]) y.data();
                BroadcastLoop.walk(shape, operands, (len, o, off, st) -> {
                    for (int k = 0, ic = off[0], ia = off[1], ib = off[2]; k < len; k++, ic += st[0], ia += st[1], ib += st[2]) {
                        z[o + k] = c[ic] != 0 ? a[ia] : b[ib];
                    }
                });
            }
            default -> throw new IllegalStateException("unexpected storage for " + t);
        }
        return out;
    }

    /** Non-zero test of every element, as 0/1 bytes. */
    static byte[] truth(NDArray a) {
        byte[] z = new byte[a.elementCount()];
        switch (domain(a.dtype())) {
            case F32 -> {
                float[] x = a.floatData();
                for (int i = 0; i < x.length; i++) z[i] = x[i] != 0 ? (byte) 1 : 0;
            }
            case F64, HALF -> {
                double[] x = toDoubles(a);
                for (int i = 0; i < x.length; i++) z[i] = x[i] != 0 ? (byte) 1 : 0;
            }
            case SIGNED, UNSIGNED -> {
                long[] x = widen(a);
                for (int i = 0; i < x.length; i++) z[i] = x[i] != 0 ? (byte) 1 : 0;
            }
        }
        return z;
    }

    /** A fresh long copy of an integer or bool array: sign-extended for intN, zero-extended for uintN/bool. */
    static long[] widen(NDArray a) {
        boolean unsigned = a.dtype().code() != DType.Code.INT;
        int n = a.elementCount();
        long[] z = new long[n];
        switch (a.data()) {
            case byte[] v -> {
                if (unsigned) for (int i = 0; i < n; i++) z[i] = v[i] & 0xffL;
                else for (int i = 0; i < n; i++) z[i] = v[i];
            }
            case short[] v when !a.dtype().isFloat() -> {
                if (unsigned) for (int i = 0; i < n; i++) z[i] = v[i] & 0xffffL;
                else for (int i = 0; i < n; i++) z[i] = v[i];
            }
            case int[] v -> {
                if (unsigned) for (int i = 0; i < n; i++) z[i] = v[i] & 0xffffffffL;
                else for (int i = 0; i < n; i++) z[i] = v[i];
            }
            case long[] v -> System.arraycopy(v, 0, z, 0, n);
            default -> throw new IllegalArgumentException("expected an integer or bool array, got " + a.dtype());
        }
        return z;
    }

    /** Wraps longs to an integer or bool dtype (bool keeps the low bit's meaning "non-zero" only for 0/1 inputs). */
    static NDArray narrow(DType t, int[] shape, long[] z) {
        int n = z.length;
        Object data = switch (t.code()) {
            case BOOL -> {
                byte[] v = new byte[n];
                for (int i = 0; i < n; i++) v[i] = z[i] != 0 ? (byte) 1 : 0;
                yield v;
            }
            case INT, UINT -> switch (t.bits()) {
                case 2, 4 -> {
                    byte[] v = new byte[n];
                    for (int i = 0; i < n; i++) v[i] = (byte) NDArray.wrapLowBits(t, z[i]);
                    yield v;
                }
                case 8 -> {
                    byte[] v = new byte[n];
                    for (int i = 0; i < n; i++) v[i] = (byte) z[i];
                    yield v;
                }
                case 16 -> {
                    short[] v = new short[n];
                    for (int i = 0; i < n; i++) v[i] = (short) z[i];
                    yield v;
                }
                case 32 -> {
                    int[] v = new int[n];
                    for (int i = 0; i < n; i++) v[i] = (int) z[i];
                    yield v;
                }
                default -> z;
            };
            default -> throw new IllegalArgumentException("narrow: " + t + " is not an integer dtype");
        };
        return NDArray.wrap(t, shape, data);
    }

    /** Every element as a double (unsigned integers read as unsigned). */
    static double[] toDoubles(NDArray a) {
        int n = a.elementCount();
        double[] z = new double[n];
        switch (domain(a.dtype())) {
            case F32 -> {
                float[] x = a.floatData();
                for (int i = 0; i < n; i++) z[i] = x[i];
            }
            case F64 -> System.arraycopy(a.doubleData(), 0, z, 0, n);
            case HALF -> {
                for (int i = 0; i < n; i++) z[i] = a.getDouble(i);
            }
            case SIGNED -> {
                long[] x = widen(a);
                for (int i = 0; i < n; i++) z[i] = x[i];
            }
            case UNSIGNED -> {
                long[] x = widen(a);
                for (int i = 0; i < n; i++) z[i] = x[i] >= 0 ? x[i] : (double) (x[i] >>> 1) * 2.0 + (x[i] & 1);
            }
        }
        return z;
    }

    /** Rounds doubles to a floating-point dtype. */
    static NDArray fromDoubles(DType t, int[] shape, double[] d) {
        switch (domain(t)) {
            case F32 -> {
                float[] z = new float[d.length];
                for (int i = 0; i < d.length; i++) z[i] = (float) d[i];
                return NDArray.wrap(t, shape, z);
            }
            case F64 -> {
                return NDArray.wrap(t, shape, d);
            }
            case HALF -> {
                NDArray out = NDArray.zeros(t, shape);
                for (int i = 0; i < d.length; i++) out.setDouble(i, d[i]); // one rounding from double (HalfFloats), not two through float
                return out;
            }
            case SIGNED, UNSIGNED -> throw new IllegalArgumentException("fromDoubles: " + t + " is not a floating-point dtype");
        }
        throw new IllegalStateException();
    }

    private static NDArray toFloat32(NDArray half) {
        int n = half.elementCount();
        float[] z = new float[n];
        for (int i = 0; i < n; i++) z[i] = (float) half.getDouble(i);
        return NDArray.wrap(DType.FLOAT32, half.shape(), z);
    }

    private static NDArray fromFloat32(DType half, NDArray f32) {
        NDArray out = NDArray.zeros(half, f32.shape());
        float[] x = f32.floatData();
        for (int i = 0; i < x.length; i++) out.setDouble(i, x[i]);
        return out;
    }
}
