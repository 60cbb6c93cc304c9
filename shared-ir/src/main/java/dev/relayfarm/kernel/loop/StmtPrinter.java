package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.ExprPrinter;
import dev.relayfarm.kernel.expr.PrimExpr;
import java.util.List;
import java.util.stream.Collectors;

/** An indented text form of loop IR for messages and tests ({@code for i in [0, 4) parallel:}). */
public final class StmtPrinter {
    private StmtPrinter() {}

    public static String print(Stmt s) {
        StringBuilder out = new StringBuilder();
        print(s, 0, out);
        return out.toString();
    }

    private static void print(Stmt s, int depth, StringBuilder out) {
        String pad = "  ".repeat(depth);
        switch (s) {
            case For f -> {
                out.append(pad).append("for ").append(f.var().name()).append(" in [").append(ExprPrinter.print(f.min())).append(", ")
                        .append(ExprPrinter.print(f.extent())).append(")").append(f.kind() == ForKind.SERIAL ? "" : " " + f.kind().name().toLowerCase()).append(":\n");
                print(f.body(), depth + 1, out);
            }
            case Store st -> out.append(pad).append(st.buffer().name()).append(indices(st.indices())).append(" = ").append(ExprPrinter.print(st.value())).append('\n');
            case Allocate a -> {
                out.append(pad).append("allocate ").append(a.buffer().name()).append(a.buffer().shape()).append(' ').append(a.scope().name().toLowerCase()).append('\n');
                print(a.body(), depth, out);
            }
            case IfThenElse i -> {
                out.append(pad).append("if ").append(ExprPrinter.print(i.condition())).append(":\n");
                print(i.then(), depth + 1, out);
                i.otherwise().ifPresent(o -> {
                    out.append(pad).append("else:\n");
                    print(o, depth + 1, out);
                });
            }
            case Seq q -> q.stmts().forEach(x -> print(x, depth, out));
            case Evaluate e -> out.append(pad).append(ExprPrinter.print(e.value())).append('\n');
        }
    }

    private static String indices(List<PrimExpr> idx) {
        return idx.stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "[", "]"));
    }
}
