package dev.relayfarm.kernel.expr;

/** Math library functions a kernel may call; the emitter picks the C name for the dtype (expf/exp). */
public enum MathFn {
    EXP(1), LOG(1), TANH(1), SQRT(1), FABS(1), FLOOR(1), CEIL(1), ERF(1), POW(2);

    public final int arity;

    MathFn(int arity) {
        this.arity = arity;
    }
}
