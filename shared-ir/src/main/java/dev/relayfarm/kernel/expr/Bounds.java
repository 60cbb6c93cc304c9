package dev.relayfarm.kernel.expr;

import java.util.Map;

/**
 * Constant bound inference for integer expressions: the interval an expression can take when each
 * variable ranges over its given interval (variables not in the map are unbounded). Sound but not
 * exact: correlated terms ({@code i - i}) widen the result; run the simplifier first to cancel them.
 */
public final class Bounds {
    private Bounds() {}

    public static Interval of(PrimExpr e, Map<Var, Interval> ranges) {
        return switch (e) {
            case IntImm i -> Interval.point(i.value());
            case FloatImm f -> Interval.EVERYTHING;
            case Var v -> ranges.getOrDefault(v, Interval.EVERYTHING);
            case Load l -> Interval.EVERYTHING;
            case TensorLoad l -> Interval.EVERYTHING;
            case Cast c -> c.dtype().isFloat() ? Interval.EVERYTHING : of(c.value(), ranges);
            case BitCast c -> Interval.EVERYTHING;
            case Call c -> Interval.EVERYTHING;
            case Reduce r -> Interval.EVERYTHING;
            case Select s -> of(s.then(), ranges).union(of(s.otherwise(), ranges));
            case Unary u -> switch (u.op()) {
                case NEG -> of(u.a(), ranges).negate();
                case NOT -> new Interval(0, 1);
                case BITNOT -> Interval.EVERYTHING;
            };
            case Binary b -> binary(b, ranges);
        };
    }

    private static Interval binary(Binary b, Map<Var, Interval> ranges) {
        if (b.op().isComparison()) return new Interval(0, 1);
        Interval x = of(b.a(), ranges), y = of(b.b(), ranges);
        return switch (b.op()) {
            case ADD -> x.add(y);
            case SUB -> x.sub(y);
            case MUL -> x.mul(y);
            case MIN -> new Interval(Math.min(x.min(), y.min()), Math.min(x.max(), y.max()));
            case MAX -> new Interval(Math.max(x.min(), y.min()), Math.max(x.max(), y.max()));
            case DIV -> {
                // Truncating division by a positive constant is monotone, so the ends map to the ends.
                if (y.isPoint() && y.min() > 0) {
                    long c = y.min();
                    yield new Interval(x.boundedBelow() ? x.min() / c : Long.MIN_VALUE, x.boundedAbove() ? x.max() / c : Long.MAX_VALUE);
                }
                yield Interval.EVERYTHING;
            }
            case MOD -> {
                if (y.isPoint() && y.min() > 0) {
                    long c = y.min();
                    if (x.min() >= 0) yield x.max() < c ? x : new Interval(0, c - 1);
                    yield new Interval(-(c - 1), c - 1);
                }
                yield Interval.EVERYTHING;
            }
            case BITAND, BITOR, BITXOR, SHL, SHR -> Interval.EVERYTHING;
            default -> throw new IllegalStateException("comparison handled above: " + b.op());
        };
    }
}
