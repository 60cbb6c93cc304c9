package dev.relayfarm.kernel.expr;

/** Math library functions a kernel may call; the emitter picks the C name for the dtype (expf/exp). */
public enum MathFn {
    EXP(1), LOG(1), TANH(1), SQRT(1), FABS(1), FLOOR(1), CEIL(1), ERF(1), POW(2),
    LOG2(1), LOG10(1), SIN(1), COS(1), TAN(1), ASIN(1), ACOS(1), ATAN(1), SINH(1), COSH(1), ASINH(1), ACOSH(1), ATANH(1),
    /** C {@code round}: half away from zero (Relay's {@code round}). */
    ROUND(1), TRUNC(1), FMOD(2),
    /** C {@code rint}: half to even in the default rounding mode (Java's {@code Math.rint}). */
    RINT(1);

    public final int arity;

    MathFn(int arity) {
        this.arity = arity;
    }
}
