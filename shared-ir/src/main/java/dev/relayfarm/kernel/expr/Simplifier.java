package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The arithmetic simplifier used on every index expression the schedule produces.
 *
 * <p>Rules: constant folding (int with C semantics, float32 rounded like the kernel computes it);
 * integer sums/products by constants are normalized to a linear form {@code sum(c_i * t_i) + k}, so
 * {@code (i_o*4 + i_i) - i_o*4} becomes {@code i_i} and {@code x*1}, {@code x+0} vanish; division and
 * modulo by a positive constant split off the multiples of the divisor when bound inference proves
 * both parts non-negative ({@code (a*c + b)/c -> a}, {@code (a*c + b)%c -> b} for {@code b} in
 * {@code [0, c)}); min/max and comparisons are decided from constant bounds; a select with a constant
 * condition picks its branch.
 *
 * <p>Not done: float reassociation (it changes results), x*0 on floats (NaN), common-subexpression
 * factoring of non-linear terms.
 */
public final class Simplifier {
    private final Map<Var, Interval> ranges;

    private Simplifier(Map<Var, Interval> ranges) {
        this.ranges = ranges;
    }

    public static PrimExpr simplify(PrimExpr e) {
        return simplify(e, Map.of());
    }

    /** Simplifies with the given variable ranges known (loop variables over {@code [0, extent)}). */
    public static PrimExpr simplify(PrimExpr e, Map<Var, Interval> ranges) {
        Simplifier s = new Simplifier(ranges);
        return PrimExprs.map(e, s::rewrite);
    }

    /** The constant value of {@code e} after simplification, if it folds to one. */
    public static java.util.OptionalLong constant(PrimExpr e, Map<Var, Interval> ranges) {
        PrimExpr s = simplify(e, ranges);
        if (s instanceof IntImm i) return java.util.OptionalLong.of(i.value());
        Interval b = Bounds.of(s, ranges);
        return b.isPoint() ? java.util.OptionalLong.of(b.min()) : java.util.OptionalLong.empty();
    }

    private static boolean isInt(PrimExpr e) {
        DType.Code c = e.dtype().code();
        return c == DType.Code.INT || c == DType.Code.UINT;
    }

    private static IntImm bool(boolean v) {
        return new IntImm(v ? 1 : 0, DType.BOOL);
    }

    private PrimExpr rewrite(PrimExpr e) {
        return switch (e) {
            case Binary b -> binary(b);
            case Unary u -> unary(u);
            case Cast c -> cast(c);
            case BitCast c -> c.value().dtype().equals(c.dtype()) ? c.value() : c;
            case Select s -> select(s);
            case Call c -> call(c);
            case IntImm i -> i;
            case FloatImm f -> f;
            case Var v -> {
                // a loop of extent 1 (a one-row tile) leaves its variable at 0
                Interval r = ranges.get(v);
                yield r != null && r.isPoint() ? new IntImm(r.min(), v.dtype()) : v;
            }
            case Load l -> l;
            case TensorLoad l -> l;
            case Reduce r -> r;
        };
    }

    private PrimExpr binary(Binary b) {
        PrimExpr x = b.a(), y = b.b();
        if (x instanceof IntImm i && y instanceof IntImm j && isInt(x)) {
            PrimExpr folded = foldInt(b.op(), i.value(), j.value(), x.dtype());
            if (folded != null) return folded;
        }
        if (x instanceof FloatImm f && y instanceof FloatImm g) return foldFloat(b.op(), f.value(), g.value(), x.dtype());
        if (b.op() == BinaryOp.AND || b.op() == BinaryOp.OR) return logical(b);
        if (isInt(x)) {
            switch (b.op()) {
                case ADD, SUB, MUL -> {
                    return Linear.of(b).build(b.dtype());
                }
                case DIV, MOD -> {
                    PrimExpr r = divMod(b);
                    if (r != null) return r;
                }
                case MIN, MAX -> {
                    Interval p = Bounds.of(x, ranges), q = Bounds.of(y, ranges);
                    if (p.max() <= q.min()) return b.op() == BinaryOp.MIN ? x : y;
                    if (q.max() <= p.min()) return b.op() == BinaryOp.MIN ? y : x;
                    if (x.equals(y)) return x;
                }
                case LT, LE, GT, GE, EQ, NE -> {
                    Boolean decided = compare(b.op(), Bounds.of(x, ranges), Bounds.of(y, ranges));
                    if (decided != null) return bool(decided);
                }
                default -> {}
            }
            return b;
        }
        if (x.dtype().isFloat()) {
            if (b.op() == BinaryOp.MUL && isFloat(y, 1.0) || (b.op() == BinaryOp.ADD || b.op() == BinaryOp.SUB) && isFloat(y, 0.0)
                    || b.op() == BinaryOp.DIV && isFloat(y, 1.0)) return x;
            if (b.op() == BinaryOp.MUL && isFloat(x, 1.0) || b.op() == BinaryOp.ADD && isFloat(x, 0.0)) return y;
        }
        return b;
    }

    private static boolean isFloat(PrimExpr e, double v) {
        return e instanceof FloatImm f && f.value() == v;
    }

    private PrimExpr logical(Binary b) {
        boolean and = b.op() == BinaryOp.AND;
        for (int side = 0; side < 2; side++) {
            PrimExpr c = side == 0 ? b.a() : b.b(), other = side == 0 ? b.b() : b.a();
            if (c instanceof IntImm i) {
                boolean v = i.value() != 0;
                if (and) return v ? other : bool(false);
                return v ? bool(true) : other;
            }
        }
        return b;
    }

    private static Boolean compare(BinaryOp op, Interval p, Interval q) {
        return switch (op) {
            case LT -> p.max() < q.min() ? Boolean.TRUE : p.min() >= q.max() ? Boolean.FALSE : null;
            case LE -> p.max() <= q.min() ? Boolean.TRUE : p.min() > q.max() ? Boolean.FALSE : null;
            case GT -> compare(BinaryOp.LT, q, p);
            case GE -> compare(BinaryOp.LE, q, p);
            // Boolean.valueOf: a bare boolean here would make the ternary unbox the null "undecided"
            case EQ -> p.isPoint() && q.isPoint() ? Boolean.valueOf(p.min() == q.min()) : p.max() < q.min() || q.max() < p.min() ? Boolean.FALSE : null;
            case NE -> {
                Boolean eq = compare(BinaryOp.EQ, p, q);
                yield eq == null ? null : !eq;
            }
            default -> null;
        };
    }

    /** Division and modulo by a positive constant of a non-negative linear expression. */
    private PrimExpr divMod(Binary b) {
        if (!(b.b() instanceof IntImm d) || d.value() <= 0) return null;
        long c = d.value();
        if (c == 1) return b.op() == BinaryOp.DIV ? b.a() : new IntImm(0, b.dtype());
        Linear lin = Linear.of(b.a());
        Linear quotient = new Linear(), rest = new Linear();
        lin.terms.forEach((t, k) -> (k % c == 0 ? quotient : rest).terms.put(t, k % c == 0 ? k / c : k));
        if (lin.constant >= 0) {
            quotient.constant = lin.constant / c;
            rest.constant = lin.constant % c;
        } else {
            rest.constant = lin.constant;
        }
        PrimExpr q = quotient.build(b.dtype()), r = rest.build(b.dtype());
        Interval qb = Bounds.of(q, ranges), rb = Bounds.of(r, ranges);
        // Splitting is exact for truncating division only when both parts are non-negative.
        boolean split = qb.min() >= 0 && rb.min() >= 0;
        if (!split) {
            Interval ab = Bounds.of(b.a(), ranges);
            if (ab.min() >= 0 && ab.max() < c) return b.op() == BinaryOp.DIV ? new IntImm(0, b.dtype()) : b.a();
            return null;
        }
        boolean restSmall = rb.max() < c;
        if (!restSmall) {
            PrimExpr split2 = divModAtFactor(b, lin, c);
            if (split2 != null) return split2;
        }
        if (b.op() == BinaryOp.DIV) {
            if (restSmall) return q;
            if (quotient.terms.isEmpty() && quotient.constant == 0) return sameOr(b, r, BinaryOp.DIV, c);
            return Linear.of(q.add(new Binary(BinaryOp.DIV, r, d))).build(b.dtype());
        }
        if (restSmall) return r;
        return sameOr(b, r, BinaryOp.MOD, c);
    }

    /**
     * {@code (a*k + low) / c -> a / (c/k)} and {@code (a*k + low) % c -> (a % (c/k))*k + low} when {@code k}
     * divides {@code c}, {@code a} is what the terms with coefficients divisible by {@code k} give divided
     * by {@code k}, and {@code 0 <= low < k}: the digits of a mixed-radix index (reshape, transpose and
     * blocked layouts compose such expressions, e.g. {@code (m*784 + y*28 + x) / 3136 = m / 4}). The largest
     * such {@code k} wins; null when none does.
     */
    private PrimExpr divModAtFactor(Binary b, Linear lin, long c) {
        java.util.TreeSet<Long> factors = new java.util.TreeSet<>(java.util.Comparator.reverseOrder());
        for (long k : lin.terms.values()) if (k > 1 && k < c && c % k == 0) factors.add(k);
        for (long k : factors) {
            Linear high = new Linear(), low = new Linear();
            lin.terms.forEach((t, v) -> {
                if (v % k == 0) high.terms.put(t, v / k);
                else low.terms.put(t, v);
            });
            high.constant = Math.floorDiv(lin.constant, k);
            low.constant = Math.floorMod(lin.constant, k);
            PrimExpr hi = high.build(b.dtype()), lo = low.build(b.dtype());
            Interval hb = Bounds.of(hi, ranges), lb = Bounds.of(lo, ranges);
            if (hb.min() < 0 || lb.min() < 0 || lb.max() >= k) continue;
            IntImm outer = new IntImm(c / k, b.dtype());
            if (b.op() == BinaryOp.DIV) return PrimExprs.map(new Binary(BinaryOp.DIV, hi, outer), this::rewrite);
            return PrimExprs.map(new Binary(BinaryOp.MOD, hi, outer).mul(k).add(lo), this::rewrite);
        }
        return null;
    }

    private static PrimExpr sameOr(Binary b, PrimExpr r, BinaryOp op, long c) {
        return r.equals(b.a()) ? b : new Binary(op, r, new IntImm(c, b.dtype()));
    }

    private static PrimExpr foldInt(BinaryOp op, long a, long b, DType dt) {
        return switch (op) {
            case ADD -> new IntImm(a + b, dt);
            case SUB -> new IntImm(a - b, dt);
            case MUL -> new IntImm(a * b, dt);
            case DIV -> b == 0 ? null : new IntImm(a / b, dt);
            case MOD -> b == 0 ? null : new IntImm(a % b, dt);
            case MIN -> new IntImm(Math.min(a, b), dt);
            case MAX -> new IntImm(Math.max(a, b), dt);
            case LT -> bool(a < b);
            case LE -> bool(a <= b);
            case GT -> bool(a > b);
            case GE -> bool(a >= b);
            case EQ -> bool(a == b);
            case NE -> bool(a != b);
            case AND -> bool(a != 0 && b != 0);
            case OR -> bool(a != 0 || b != 0);
            // left to C: folding would need the dtype's width and signedness
            case BITAND, BITOR, BITXOR, SHL, SHR -> null;
        };
    }

    private static PrimExpr foldFloat(BinaryOp op, double a, double b, DType dt) {
        double r = switch (op) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case MOD -> a % b;
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
            case LT -> a < b ? 1 : 0;
            case LE -> a <= b ? 1 : 0;
            case GT -> a > b ? 1 : 0;
            case GE -> a >= b ? 1 : 0;
            case EQ -> a == b ? 1 : 0;
            case NE -> a != b ? 1 : 0;
            case AND, OR, BITAND, BITOR, BITXOR, SHL, SHR -> throw new IllegalArgumentException(op + " on floats");
        };
        if (op.isComparison()) return bool(r != 0);
        return new FloatImm(round(r, dt), dt);
    }

    /** Rounds to the dtype's precision: float32 kernels compute in float, so folding must too. */
    private static double round(double v, DType dt) {
        if (dev.relayfarm.ir.HalfFloats.isNarrow(dt)) return dev.relayfarm.ir.HalfFloats.roundNarrow(dt, v);
        return dt.bits() == 32 ? (double) (float) v : v;
    }

    private PrimExpr unary(Unary u) {
        if (u.op() == UnaryOp.NEG) {
            if (u.a() instanceof IntImm i) return new IntImm(-i.value(), i.dtype());
            if (u.a() instanceof FloatImm f) return new FloatImm(-f.value(), f.dtype());
            if (u.a() instanceof Unary inner && inner.op() == UnaryOp.NEG) return inner.a();
            if (isInt(u)) return Linear.of(u).build(u.dtype());
        } else if (u.op() == UnaryOp.NOT && u.a() instanceof IntImm i) {
            return bool(i.value() == 0);
        }
        return u;
    }

    private static PrimExpr cast(Cast c) {
        if (c.value().dtype().equals(c.dtype())) return c.value();
        // conversions to or from the low-bit types (saturation, wrapping to 4/2 bits) are left to the kernel
        if (c.dtype().isLowBit() || c.value().dtype().isLowBit()) return c;
        boolean toFloat = c.dtype().isFloat();
        if (c.value() instanceof IntImm i) return toFloat ? new FloatImm(round(i.value(), c.dtype()), c.dtype()) : new IntImm(i.value(), c.dtype());
        if (c.value() instanceof FloatImm f && !Double.isNaN(f.value()) && !Double.isInfinite(f.value())) {
            return toFloat ? new FloatImm(round(f.value(), c.dtype()), c.dtype()) : new IntImm((long) f.value(), c.dtype());
        }
        return c;
    }

    private static PrimExpr select(Select s) {
        if (s.condition() instanceof IntImm i) return i.value() != 0 ? s.then() : s.otherwise();
        if (s.then().equals(s.otherwise())) return s.then();
        return s;
    }

    private static PrimExpr call(Call c) {
        List<Double> args = new ArrayList<>();
        for (PrimExpr a : c.args()) {
            if (!(a instanceof FloatImm f)) return c;
            args.add(f.value());
        }
        double x = args.getFirst();
        double r = switch (c.fn()) {
            case EXP -> Math.exp(x);
            case LOG -> Math.log(x);
            case TANH -> Math.tanh(x);
            case SQRT -> Math.sqrt(x);
            case FABS -> Math.abs(x);
            case FLOOR -> Math.floor(x);
            case CEIL -> Math.ceil(x);
            case RINT -> Math.rint(x);
            case POW -> Math.pow(x, args.get(1));
            case ERF -> Double.NaN; // no erf in java.lang.Math: left to the C library
            // left to the C library: Java's results may differ from it in the last bit
            case LOG2, LOG10, SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH, ROUND, TRUNC, FMOD -> Double.NaN;
        };
        if (Double.isNaN(r) && !Double.isNaN(x)) return c;
        return new FloatImm(round(r, c.dtype()), c.dtype());
    }

    /** {@code sum(coeff * term) + constant} over integer terms, in first-appearance order. */
    private static final class Linear {
        final Map<PrimExpr, Long> terms = new LinkedHashMap<>();
        long constant;

        static Linear of(PrimExpr e) {
            Linear l = new Linear();
            l.add(e, 1);
            l.recombineDivMod();
            return l;
        }

        /**
         * {@code k*c*(x / c) + k*(x % c) -> k*x}: C's division identity, exact for any sign. It undoes
         * fuse (the row-major offset of a fused axis's two halves is the fused index itself).
         */
        private void recombineDivMod() {
            for (PrimExpr t : List.copyOf(terms.keySet())) {
                if (!(t instanceof Binary mod) || mod.op() != BinaryOp.MOD || !(mod.b() instanceof IntImm c) || c.value() == 0) continue;
                PrimExpr div = new Binary(BinaryOp.DIV, mod.a(), c);
                Long km = terms.get(t), kd = terms.get(div);
                if (km == null || kd == null || km == 0 || kd != km * c.value()) continue;
                // x's terms take the place of the first of the two, so the expression keeps its order
                Linear x = new Linear();
                x.add(mod.a(), km);
                Map<PrimExpr, Long> rebuilt = new LinkedHashMap<>();
                boolean placed = false;
                for (Map.Entry<PrimExpr, Long> e : terms.entrySet()) {
                    if (e.getKey().equals(t) || e.getKey().equals(div)) {
                        if (!placed) x.terms.forEach((k, v) -> rebuilt.merge(k, v, Long::sum));
                        placed = true;
                    } else {
                        rebuilt.merge(e.getKey(), e.getValue(), Long::sum);
                    }
                }
                terms.clear();
                terms.putAll(rebuilt);
                constant += x.constant;
            }
        }

        private void add(PrimExpr e, long scale) {
            switch (e) {
                case IntImm i -> constant += scale * i.value();
                case Binary b when b.op() == BinaryOp.ADD -> {
                    add(b.a(), scale);
                    add(b.b(), scale);
                }
                case Binary b when b.op() == BinaryOp.SUB -> {
                    add(b.a(), scale);
                    add(b.b(), -scale);
                }
                case Binary b when b.op() == BinaryOp.MUL && b.b() instanceof IntImm k -> add(b.a(), scale * k.value());
                case Binary b when b.op() == BinaryOp.MUL && b.a() instanceof IntImm k -> add(b.b(), scale * k.value());
                case Unary u when u.op() == UnaryOp.NEG -> add(u.a(), -scale);
                default -> terms.merge(e, scale, Long::sum);
            }
        }

        PrimExpr build(DType dt) {
            PrimExpr result = null;
            for (boolean positive : new boolean[] {true, false}) {
                for (Map.Entry<PrimExpr, Long> t : terms.entrySet()) {
                    long k = t.getValue();
                    if (k == 0 || (k > 0) != positive) continue;
                    PrimExpr term = Math.abs(k) == 1 ? t.getKey() : new Binary(BinaryOp.MUL, t.getKey(), new IntImm(Math.abs(k), dt));
                    if (result == null) result = positive ? term : new Unary(UnaryOp.NEG, term);
                    else result = new Binary(positive ? BinaryOp.ADD : BinaryOp.SUB, result, term);
                }
            }
            if (result == null) return new IntImm(constant, dt);
            if (constant > 0) return new Binary(BinaryOp.ADD, result, new IntImm(constant, dt));
            if (constant < 0) return new Binary(BinaryOp.SUB, result, new IntImm(-constant, dt));
            return result;
        }
    }
}
