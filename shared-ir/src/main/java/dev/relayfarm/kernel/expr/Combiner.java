package dev.relayfarm.kernel.expr;

/** The associative combiner of a {@link Reduce}. */
public enum Combiner {
    SUM, MAX, MIN, PROD;

    public PrimExpr combine(PrimExpr acc, PrimExpr value) {
        return switch (this) {
            case SUM -> new Binary(BinaryOp.ADD, acc, value);
            case MAX -> new Binary(BinaryOp.MAX, acc, value);
            case MIN -> new Binary(BinaryOp.MIN, acc, value);
            case PROD -> new Binary(BinaryOp.MUL, acc, value);
        };
    }
}
