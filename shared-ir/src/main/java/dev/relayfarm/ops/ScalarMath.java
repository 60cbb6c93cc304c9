package dev.relayfarm.ops;

/** Scalar functions the element-wise operators need and {@link Math} lacks, in double precision. */
final class ScalarMath {
    private ScalarMath() {}

    private static final double TWO_OVER_SQRT_PI = 1.1283791670955126;

    /**
     * The error function. For |x| < 6 it sums the series
     * erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)), whose terms are all positive, so no
     * cancellation spoils the last digits (unlike the alternating Taylor series); beyond 6,
     * 1 − erf(x) < 3e−17 and the result is ±1 in double precision.
     */
    static double erf(double x) {
        if (Double.isNaN(x)) return x;
        double ax = Math.abs(x);
        if (ax >= 6) return Math.copySign(1.0, x);
        double x2 = ax * ax;
        double term = ax;
        double sum = ax;
        for (int n = 0; n < 200; n++) {
            term *= 2 * x2 / (2 * n + 3);
            sum += term;
            if (term < sum * 1e-17) break;
        }
        return Math.copySign(TWO_OVER_SQRT_PI * Math.exp(-x2) * sum, x);
    }

    /** Relay's {@code round}: half away from zero (it lowers to C {@code round} / {@code llvm.round}), not half to even. */
    static double round(double x) {
        if (Double.isNaN(x) || Double.isInfinite(x)) return x;
        double f = Math.floor(x);
        double frac = x - f; // exact: x and floor(x) are within one unit of each other's exponent range
        if (frac > 0.5) return f + 1;
        if (frac < 0.5) return f;
        return x > 0 ? f + 1 : f;
    }

    static double asinh(double x) {
        double ax = Math.abs(x);
        // log1p form keeps precision near 0, where log(x + sqrt(x²+1)) would lose it.
        double r = ax > 1e150 ? Math.log(ax) + Math.log(2) : Math.log1p(ax + ax * ax / (1 + Math.sqrt(1 + ax * ax)));
        return Math.copySign(r, x);
    }

    static double acosh(double x) {
        if (x < 1) return Double.NaN;
        return x > 1e150 ? Math.log(x) + Math.log(2) : Math.log(x + Math.sqrt(x * x - 1));
    }

    static double atanh(double x) {
        return 0.5 * Math.log1p(2 * x / (1 - x));
    }

    /** log2, exact for powers of two (so log2(8) is 3, not 2.9999999999999996). */
    static double log2(double x) {
        if (x > 0 && x < Double.POSITIVE_INFINITY && x >= Double.MIN_NORMAL
                && (Double.doubleToRawLongBits(x) & 0x000fffffffffffffL) == 0) {
            return Math.getExponent(x);
        }
        return Math.log(x) / Math.log(2);
    }

    static double sigmoid(double x) {
        return 1 / (1 + Math.exp(-x));
    }

    /**
     * Integer power with wrap-around, by squaring. A negative exponent gives what C's truncating
     * 1 / base^|e| would: 1 for base 1, ±1 for base −1, 0 otherwise (base 0 is a division by zero).
     * With {@code unsigned} the exponent's bits are read as unsigned.
     */
    static long ipow(long base, long exp, boolean unsigned, String op) {
        if (!unsigned && exp < 0) {
            if (base == 0) throw new ArithmeticException(op + ": integer division by zero (0 to a negative power)");
            if (base == 1) return 1;
            if (base == -1) return (exp & 1) == 0 ? 1 : -1;
            return 0;
        }
        long result = 1;
        long b = base;
        for (long e = exp; e != 0; e >>>= 1) {
            if ((e & 1) != 0) result *= b;
            b *= b;
        }
        return result;
    }

    static long checkDivisor(long b, String op) {
        if (b == 0) throw new ArithmeticException(op + ": integer division by zero");
        return b;
    }
}
