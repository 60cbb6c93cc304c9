package dev.relayfarm.kernel.expr;

/**
 * A closed integer interval {@code [min, max]}; {@link Long#MIN_VALUE}/{@link Long#MAX_VALUE} stand
 * for "unbounded". Arithmetic saturates instead of wrapping, so an unknown bound stays unknown.
 */
public record Interval(long min, long max) {
    public static final Interval EVERYTHING = new Interval(Long.MIN_VALUE, Long.MAX_VALUE);

    public static Interval point(long v) {
        return new Interval(v, v);
    }

    /** The range of a loop variable over {@code [0, extent)}. */
    public static Interval range(long extent) {
        return new Interval(0, extent - 1);
    }

    public boolean isPoint() {
        return min == max;
    }

    public boolean boundedBelow() {
        return min != Long.MIN_VALUE;
    }

    public boolean boundedAbove() {
        return max != Long.MAX_VALUE;
    }

    public Interval add(Interval o) {
        return new Interval(satAdd(min, o.min), satAdd(max, o.max));
    }

    public Interval negate() {
        return new Interval(max == Long.MAX_VALUE ? Long.MIN_VALUE : -max, min == Long.MIN_VALUE ? Long.MAX_VALUE : -min);
    }

    public Interval sub(Interval o) {
        return add(o.negate());
    }

    public Interval mul(Interval o) {
        if (!boundedBelow() || !boundedAbove() || !o.boundedBelow() || !o.boundedAbove()) {
            if (isPoint() && min == 0 || o.isPoint() && o.min == 0) return point(0);
            if (min >= 0 && o.min >= 0) return new Interval(satMul(min, o.min), Long.MAX_VALUE);
            return EVERYTHING;
        }
        long a = satMul(min, o.min), b = satMul(min, o.max), c = satMul(max, o.min), d = satMul(max, o.max);
        return new Interval(Math.min(Math.min(a, b), Math.min(c, d)), Math.max(Math.max(a, b), Math.max(c, d)));
    }

    public Interval union(Interval o) {
        return new Interval(Math.min(min, o.min), Math.max(max, o.max));
    }

    static long satAdd(long a, long b) {
        if (a == Long.MIN_VALUE || b == Long.MIN_VALUE) return Long.MIN_VALUE;
        if (a == Long.MAX_VALUE || b == Long.MAX_VALUE) return Long.MAX_VALUE;
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) return a > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        return r;
    }

    static long satMul(long a, long b) {
        if (a == 0 || b == 0) return 0;
        long hi = Math.multiplyHigh(a, b), lo = a * b;
        if (hi == 0 && lo >= 0 || hi == -1 && lo < 0) return lo;
        return (a > 0) == (b > 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
}
