package dev.relayfarm.interp;

import dev.relayfarm.ir.NDArray;
import java.util.Arrays;
import java.util.Optional;

/**
 * Compares an output with its expected value as the ONNX backend tests do: floats within
 * {@code |actual - expected| <= atol + rtol * |expected|} (NaN matches NaN, infinities must be
 * equal), integers and booleans exactly; dtype and shape must match.
 */
public record Tolerance(double rtol, double atol) {
    public static final Tolerance ONNX_DEFAULT = new Tolerance(1e-3, 1e-7);

    /** Where and by how much two arrays differ. */
    public record Mismatch(String message, double maxAbsError, double maxRelError, int worstIndex) {}

    public Optional<Mismatch> compare(NDArray actual, NDArray expected) {
        if (!actual.dtype().equals(expected.dtype())) {
            return Optional.of(new Mismatch("dtype " + actual.dtype() + " but expected " + expected.dtype(), Double.NaN, Double.NaN, -1));
        }
        if (!Arrays.equals(actual.shape(), expected.shape())) {
            return Optional.of(new Mismatch("shape " + Arrays.toString(actual.shape()) + " but expected " + Arrays.toString(expected.shape()), Double.NaN, Double.NaN, -1));
        }
        if (expected.dtype().isString()) return compareStrings(actual.stringData(), expected.stringData(), expected.shape());
        boolean exact = !expected.dtype().isFloat();
        double maxAbs = 0, maxRel = 0;
        int worst = -1, bad = 0;
        int n = expected.elementCount();
        for (int i = 0; i < n; i++) {
            boolean ok;
            double a, e;
            if (exact) {
                long la = actual.getLong(i), le = expected.getLong(i);
                ok = la == le;
                a = la;
                e = le;
            } else {
                a = actual.getDouble(i);
                e = expected.getDouble(i);
                if (Double.isNaN(e) || Double.isNaN(a)) ok = Double.isNaN(e) && Double.isNaN(a);
                else if (Double.isInfinite(e) || Double.isInfinite(a)) ok = a == e;
                else ok = Math.abs(a - e) <= atol + rtol * Math.abs(e);
            }
            if (!ok) {
                bad++;
                double abs = Math.abs(a - e);
                double rel = e == 0 ? Double.POSITIVE_INFINITY : abs / Math.abs(e);
                if (worst < 0 || abs > maxAbs || Double.isNaN(abs)) {
                    worst = i;
                }
                if (!(abs <= maxAbs)) maxAbs = abs;
                if (!(rel <= maxRel)) maxRel = rel;
            }
        }
        if (bad == 0) return Optional.empty();
        String at = "index " + Arrays.toString(unravel(worst, expected.shape()));
        String msg = String.format("%d of %d values differ; max abs error %.3g, max rel error %.3g; worst at %s: got %s, expected %s",
                bad, n, maxAbs, maxRel, at, value(actual, worst), value(expected, worst));
        return Optional.of(new Mismatch(msg, maxAbs, maxRel, worst));
    }

    /** Strings compare exactly (code units, no normalization). */
    private static Optional<Mismatch> compareStrings(String[] a, String[] e, int[] shape) {
        int bad = 0, first = -1;
        for (int i = 0; i < e.length; i++) {
            if (!a[i].equals(e[i])) {
                if (first < 0) first = i;
                bad++;
            }
        }
        if (bad == 0) return Optional.empty();
        return Optional.of(new Mismatch(String.format("%d of %d strings differ; first at index %s: got %s, expected %s", bad, e.length,
                Arrays.toString(unravel(first, shape)), NDArray.quote(a[first]), NDArray.quote(e[first])), Double.NaN, Double.NaN, first));
    }

    private static String value(NDArray a, int i) {
        return a.dtype().isFloat() ? Double.toString(a.getDouble(i)) : Long.toString(a.getLong(i));
    }

    private static int[] unravel(int flat, int[] shape) {
        int[] idx = new int[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            if (shape[d] == 0) return idx;
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
        return idx;
    }
}
