package dev.relayfarm.text;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeFormat;

/**
 * Readable rendering of a {@link StructuralEquality.Mismatch}: the path and reason, then each side
 * as Relay text (truncated), instead of the nodes' {@code toString()}.
 *
 * <pre>
 * at @main.body.args[1]: different constant values
 *   lhs: 1f
 *   rhs: 2f
 * </pre>
 */
public final class MismatchText {
    private static final int MAX_CHARS = 600;

    private MismatchText() {}

    public static String render(StructuralEquality.Mismatch m) {
        return "at " + m.path() + ": " + m.reason() + "\n  lhs: " + snippet(m.lhs()) + "\n  rhs: " + snippet(m.rhs());
    }

    /** A short text form of one side of a mismatch. */
    public static String snippet(Object o) {
        String s = switch (o) {
            case null -> "(none)";
            case Expr e -> exprText(e);
            case Type t -> TypeFormat.format(t);
            case NDArray a -> Literals.format(a) != null ? Literals.format(a) : a.toString();
            default -> String.valueOf(o);
        };
        s = s.strip().replace("\n", "\n       ");
        return s.length() > MAX_CHARS ? s.substring(0, MAX_CHARS) + " ..." : s;
    }

    private static String exprText(Expr e) {
        String text = RelayPrinter.print(e);
        // Drop the version header: noise in a diff.
        int nl = text.indexOf('\n');
        return nl >= 0 && text.startsWith("#[version") ? text.substring(nl + 1) : text;
    }
}
