package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.PrimExpr;
import java.util.Optional;

/**
 * An integer that depends on a kernel's run-time size through {@code t = size / PERIOD} (one residue class of the
 * size): {@code a + b·t + c·t(t-1)/2}. The binomial basis keeps every coefficient an integer for any integer-valued
 * quadratic, so {@link #fit} needs no fractions; a quadratic covers the strides of an {@code L × L} attention matrix, an
 * affine one every extent and offset of a row, column or image width.
 */
record SizePolynomial(long a, long b, long c) {
    /** Its value at {@code t}. */
    long at(long t) {
        return a + b * t + c * (t * (t - 1) / 2);
    }

    boolean isConstant() {
        return b == 0 && c == 0;
    }

    /**
     * The polynomial through {@code (ts[i], ys[i])}, fitted on the first three points (consecutive {@code t}s: Newton's
     * differences) and checked on the rest; empty when a point is off it (the value is not a quadratic in {@code t}).
     */
    static Optional<SizePolynomial> fit(long[] ts, long[] ys) {
        if (ts.length < 4 || ts[1] != ts[0] + 1 || ts[2] != ts[0] + 2) throw new IllegalArgumentException("three consecutive samples and one more to check");
        long t0 = ts[0], d1 = ys[1] - ys[0], d2 = ys[2] - 2 * ys[1] + ys[0];
        // y0 + d1 (t - t0) + d2 (t - t0)(t - t0 - 1)/2, rewritten in the basis 1, t, t(t-1)/2
        SizePolynomial p = new SizePolynomial(ys[0] - d1 * t0 + d2 * (t0 * (t0 + 1) / 2), d1 - d2 * t0, d2);
        for (int i = 0; i < ts.length; i++) if (p.at(ts[i]) != ys[i]) return Optional.empty();
        return Optional.of(p);
    }

    /** The polynomial as an expression in {@code t}, of type {@code dtype} (an int64 {@code t} is cast to narrower types). */
    PrimExpr expr(PrimExpr t, DType dtype) {
        if (isConstant()) return new IntImm(a, dtype);
        PrimExpr e = null;
        if (b != 0) e = b == 1 ? t : t.mul(b);
        if (c != 0) {
            PrimExpr q = t.mul(t.sub(1)).div(2);
            q = c == 1 ? q : q.mul(c);
            e = e == null ? q : e.add(q);
        }
        if (a != 0) e = e.add(a);
        return dtype.equals(DType.INT64) ? e : new dev.relayfarm.kernel.expr.Cast(dtype, e);
    }
}
