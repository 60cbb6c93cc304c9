package dev.relayfarm.ad;

/**
 * One finite-difference check of an operator's gradient: a float64 program whose {@code @main} calls the operator
 * (indices and other integer inputs as constants in the text), checked at seeded uniform inputs in [lo, hi).
 */
record GradientCase(String op, String program, double lo, double hi) {
    static GradientCase of(String op, String program) {
        return new GradientCase(op, program, -1, 1);
    }

    /** Inputs from [lo, hi) instead (an operator defined or smooth only there: log, sqrt, acosh). */
    GradientCase range(double lo, double hi) {
        return new GradientCase(op, program, lo, hi);
    }

    /** Whether {@code module} really calls the operator (a substring test would take floor_mod( for mod(). */
    boolean isCalledIn(dev.relayfarm.ir.IRModule module) {
        return module.functions().values().stream().flatMap(f -> dev.relayfarm.ir.ExprTraversal.postOrder(f.body()).stream())
                .anyMatch(e -> e instanceof dev.relayfarm.ir.Call call && call.callee() instanceof dev.relayfarm.ir.Op o && o.name().equals(op));
    }

    @Override
    public String toString() {
        return op + ": " + program.strip().lines().skip(1).findFirst().orElse(program).strip();
    }
}
