package dev.relayfarm.kernel.expr;

import java.util.stream.Collectors;

/**
 * A readable one-line form of a scalar expression for messages and tests: fully parenthesized binary
 * operators, {@code A[i, j]} loads, {@code min(a, b)}, {@code exp(x)}, {@code float32(x)} casts,
 * {@code select(c, a, b)}. Not C: the C emitter is a separate printer.
 */
public final class ExprPrinter {
    private ExprPrinter() {}

    public static String print(PrimExpr e) {
        return switch (e) {
            case IntImm i -> i.dtype().code() == dev.relayfarm.ir.DType.Code.BOOL ? (i.value() != 0 ? "true" : "false") : Long.toString(i.value());
            case FloatImm f -> f.value() + "f";
            case Var v -> v.name();
            case Load l -> l.buffer().name() + l.indices().stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "[", "]"));
            case TensorLoad l -> l.tensor().name() + l.indices().stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "(", ")"));
            case Binary b -> switch (b.op()) {
                case MIN, MAX -> b.op().symbol + "(" + print(b.a()) + ", " + print(b.b()) + ")";
                default -> "(" + print(b.a()) + " " + b.op().symbol + " " + print(b.b()) + ")";
            };
            case Unary u -> (switch (u.op()) {
                case NEG -> "-";
                case NOT -> "!";
                case BITNOT -> "~";
            }) + print(u.a());
            case Cast c -> c.dtype() + "(" + print(c.value()) + (c.saturate() ? ", saturate" : "")
                    + (c.dtype().code() == dev.relayfarm.ir.DType.Code.FLOAT8_E8M0FNU && c.roundMode() != dev.relayfarm.ir.MiniFloats.RoundMode.UP ? ", " + c.roundMode().spelling() : "") + ")";
            case BitCast c -> "bitcast<" + c.dtype() + ">(" + print(c.value()) + ")";
            case Select s -> "select(" + print(s.condition()) + ", " + print(s.then()) + ", " + print(s.otherwise()) + ")";
            case Call c -> c.fn().name().toLowerCase() + c.args().stream().map(ExprPrinter::print).collect(Collectors.joining(", ", "(", ")"));
            case Reduce r -> r.combiner().name().toLowerCase() + "(" + print(r.source()) + ", axes="
                    + r.axes().stream().map(IterVar::name).collect(Collectors.joining(", ", "[", "]")) + ", init=" + print(r.init()) + ")";
        };
    }
}
