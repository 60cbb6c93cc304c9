package dev.relayfarm.kernel.expr;

/**
 * Binary operators. {@code DIV} and {@code MOD} on integers truncate toward zero as C does; index
 * expressions built by the schedule are non-negative, and the simplifier only rewrites divisions when
 * bound inference proves that.
 */
public enum BinaryOp {
    ADD("+"), SUB("-"), MUL("*"), DIV("/"), MOD("%"), MIN("min"), MAX("max"),
    LT("<"), LE("<="), GT(">"), GE(">="), EQ("=="), NE("!="), AND("&&"), OR("||"),
    /** Bitwise operators and shifts, on integers only (C semantics: {@code >>} is arithmetic on signed types). */
    BITAND("&"), BITOR("|"), BITXOR("^"), SHL("<<"), SHR(">>");

    public final String symbol;

    BinaryOp(String symbol) {
        this.symbol = symbol;
    }

    public boolean isComparison() {
        return switch (this) {
            case LT, LE, GT, GE, EQ, NE, AND, OR -> true;
            default -> false;
        };
    }
}
