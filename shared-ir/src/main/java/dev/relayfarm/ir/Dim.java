package dev.relayfarm.ir;

/**
 * One dimension of a tensor shape: a known integer, a symbolic size variable ({@code n}), an
 * arithmetic expression over those ({@code 2 * n}), or {@code Any} ({@code ?}), a size known only at
 * run time. Dimensions are small values and compare structurally (record equality).
 */
public sealed interface Dim {
    Dim ANY = new Any();

    record Int(long value) implements Dim {
        @Override
        public String toString() {
            return Long.toString(value);
        }
    }

    /** A named size variable; two {@code Sym}s with the same name are the same size. */
    record Sym(String name) implements Dim {
        @Override
        public String toString() {
            return name;
        }
    }

    record Any() implements Dim {
        @Override
        public String toString() {
            return "?";
        }
    }

    enum BinOp {
        ADD("+", 1), SUB("-", 1), MUL("*", 2), FLOOR_DIV("/", 2), FLOOR_MOD("%", 2);

        public final String symbol;
        /** Binding strength for printing with minimal parentheses. */
        public final int precedence;

        BinOp(String symbol, int precedence) {
            this.symbol = symbol;
            this.precedence = precedence;
        }
    }

    record Bin(BinOp op, Dim lhs, Dim rhs) implements Dim {
        @Override
        public String toString() {
            return DimFormat.format(this);
        }
    }

    static Dim of(long value) {
        return new Int(value);
    }

    static Dim sym(String name) {
        return new Sym(name);
    }

    default boolean isStatic() {
        return this instanceof Int;
    }

    /** The integer value; throws if this dimension is not a known integer. */
    default long value() {
        if (this instanceof Int(long v)) return v;
        throw new IllegalStateException("dimension " + this + " is not a static integer");
    }
}
