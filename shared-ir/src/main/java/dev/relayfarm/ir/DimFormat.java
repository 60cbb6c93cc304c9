package dev.relayfarm.ir;

/** Prints dimension expressions with the parentheses their precedence needs. */
final class DimFormat {
    private DimFormat() {}

    static String format(Dim d) {
        StringBuilder sb = new StringBuilder();
        append(sb, d, 0);
        return sb.toString();
    }

    private static void append(StringBuilder sb, Dim d, int outer) {
        if (d instanceof Dim.Bin(Dim.BinOp op, Dim lhs, Dim rhs)) {
            boolean parens = op.precedence < outer;
            if (parens) sb.append('(');
            append(sb, lhs, op.precedence);
            sb.append(' ').append(op.symbol).append(' ');
            // Right operand binds tighter so that a - (b - c) keeps its parentheses.
            append(sb, rhs, op.precedence + 1);
            if (parens) sb.append(')');
        } else {
            sb.append(d);
        }
    }
}
