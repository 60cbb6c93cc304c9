package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.BitCast;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.UnaryOp;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.CastAttrs;
import dev.relayfarm.ops.ClipAttrs;
import dev.relayfarm.ops.nn.Activations;
import dev.relayfarm.ops.nn.BiasAdd;
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.UnaryOperator;

/**
 * Compute rules of the element-wise and broadcasting operators ({@code ElementwiseOps}, plus the
 * element-wise nn activations and {@code nn.bias_add}). Element formulas follow the interpreter's
 * kernels per dtype:
 * <ul>
 *   <li>integer {@code divide}/{@code mod} truncate (C), {@code floor_divide}/{@code floor_mod} round
 *       toward −∞ (a select corrects C's truncating result), unsigned types divide unsigned;
 *   <li>bool arithmetic is done on 0/1 and normalized back to 0/1 (non-zero is true), as the
 *       interpreter's widen/narrow does;
 *   <li>{@code logical_*} keep the input dtype and give 0/1 in it; comparisons give bool;
 *   <li>{@code round} is C {@code round} (half away from zero), like the interpreter's;
 *   <li>integer {@code power} is computed through double {@code pow} and truncated: exact while the
 *       result fits in 53 bits (the interpreter wraps on overflow, C conversion of an out-of-range
 *       double is undefined);
 *   <li>{@code cast} float→int truncates (C; the interpreter saturates out-of-range values, C leaves
 *       them undefined), anything→bool tests non-zero.
 * </ul>
 * Known difference: float {@code maximum}/{@code minimum} do not propagate NaN (see
 * {@link dev.relayfarm.kernel.codegen.CEmitter}). Intermediate results of 8/16-bit integer operators
 * are exact only after the store to their dtype (C computes them in {@code int}); a fused consumer that
 * inlines one sees the unwrapped value.
 */
final class ElementwiseComputes {
    private ElementwiseComputes() {}

    static void register(OpComputes.Rules r) {
        // arithmetic
        r.add("add", c -> binary(c, (a, b) -> norm(c, new Binary(BinaryOp.ADD, a, b))));
        r.add("subtract", c -> binary(c, (a, b) -> norm(c, new Binary(BinaryOp.SUB, a, b))));
        r.add("multiply", c -> binary(c, (a, b) -> norm(c, new Binary(BinaryOp.MUL, a, b))));
        r.add("divide", c -> binary(c, (a, b) -> new Binary(BinaryOp.DIV, a, b)));
        r.add("trunc_divide", c -> binary(c, (a, b) -> new Binary(BinaryOp.DIV, a, b)));
        r.add("floor_divide", c -> binary(c, ElementwiseComputes::floorDivide));
        r.add("floor_mod", c -> binary(c, ElementwiseComputes::floorMod));
        r.add("mod", c -> binary(c, ElementwiseComputes::truncMod));
        r.add("trunc_mod", c -> binary(c, ElementwiseComputes::truncMod));
        r.add("power", c -> binary(c, ElementwiseComputes::power));
        r.add("maximum", c -> binary(c, (a, b) -> minMax(BinaryOp.MAX, a, b)));
        r.add("minimum", c -> binary(c, (a, b) -> minMax(BinaryOp.MIN, a, b)));
        // logical ops keep the input dtype, giving 0/1 in it
        r.add("logical_and", c -> binary(c, (a, b) -> boolIn(a.dtype(), truth(a).and(truth(b)))));
        r.add("logical_or", c -> binary(c, (a, b) -> boolIn(a.dtype(), truth(a).or(truth(b)))));
        r.add("logical_xor", c -> binary(c, (a, b) -> boolIn(a.dtype(), new Binary(BinaryOp.NE, truth(a), truth(b)))));
        // bitwise ops and shifts (integers; and/or/xor also bool)
        r.add("bitwise_and", c -> binary(c, (a, b) -> integer(c, a, new Binary(BinaryOp.BITAND, a, b))));
        r.add("bitwise_or", c -> binary(c, (a, b) -> integer(c, a, new Binary(BinaryOp.BITOR, a, b))));
        r.add("bitwise_xor", c -> binary(c, (a, b) -> integer(c, a, new Binary(BinaryOp.BITXOR, a, b))));
        r.add("left_shift", c -> binary(c, (a, b) -> integer(c, a, new Binary(BinaryOp.SHL, a, b))));
        r.add("right_shift", c -> binary(c, (a, b) -> integer(c, a, new Binary(BinaryOp.SHR, a, b))));
        // comparisons give bool
        for (String[] cmp : new String[][] {{"equal", "EQ"}, {"not_equal", "NE"}, {"less", "LT"}, {"less_equal", "LE"}, {"greater", "GT"}, {"greater_equal", "GE"}}) {
            BinaryOp op = BinaryOp.valueOf(cmp[1]);
            r.add(cmp[0], c -> binary(c, (a, b) -> new Binary(op, a, b)));
        }

        // unary ops on every dtype
        r.add("negative", c -> unary(c, x -> norm(c, x.dtype().isBool() ? x : new Unary(UnaryOp.NEG, x))));
        r.add("abs", c -> unary(c, ElementwiseComputes::abs));
        r.add("sign", c -> unary(c, ElementwiseComputes::sign));
        r.add("floor", c -> unary(c, x -> floatOrSame(x, MathFn.FLOOR)));
        r.add("ceil", c -> unary(c, x -> floatOrSame(x, MathFn.CEIL)));
        r.add("round", c -> unary(c, x -> floatOrSame(x, MathFn.ROUND)));
        r.add("trunc", c -> unary(c, x -> floatOrSame(x, MathFn.TRUNC)));
        r.add("logical_not", c -> unary(c, x -> boolIn(x.dtype(), new Unary(UnaryOp.NOT, truth(x)))));
        r.add("bitwise_not", c -> unary(c, x -> integer(c, x, new Unary(UnaryOp.BITNOT, x))));

        // floating-point-only unary ops
        floatUnary(r, "exp", x -> call(MathFn.EXP, x));
        floatUnary(r, "log", x -> call(MathFn.LOG, x));
        floatUnary(r, "log2", x -> call(MathFn.LOG2, x));
        floatUnary(r, "log10", x -> call(MathFn.LOG10, x));
        floatUnary(r, "sqrt", x -> call(MathFn.SQRT, x));
        floatUnary(r, "rsqrt", x -> new Binary(BinaryOp.DIV, Te.constant(x.dtype(), 1), call(MathFn.SQRT, x)));
        floatUnary(r, "sigmoid", Elementwise.unaryFormula("sigmoid"));
        floatUnary(r, "erf", x -> call(MathFn.ERF, x));
        floatUnary(r, "tanh", x -> call(MathFn.TANH, x));
        floatUnary(r, "sinh", x -> call(MathFn.SINH, x));
        floatUnary(r, "cosh", x -> call(MathFn.COSH, x));
        floatUnary(r, "sin", x -> call(MathFn.SIN, x));
        floatUnary(r, "cos", x -> call(MathFn.COS, x));
        floatUnary(r, "tan", x -> call(MathFn.TAN, x));
        floatUnary(r, "asin", x -> call(MathFn.ASIN, x));
        floatUnary(r, "acos", x -> call(MathFn.ACOS, x));
        floatUnary(r, "atan", x -> call(MathFn.ATAN, x));
        floatUnary(r, "asinh", x -> call(MathFn.ASINH, x));
        floatUnary(r, "acosh", x -> call(MathFn.ACOSH, x));
        floatUnary(r, "atanh", x -> call(MathFn.ATANH, x));

        // predicates give bool; integers are never NaN or infinite
        r.add("isnan", c -> unary(c, x -> x.dtype().isFloat() ? new Binary(BinaryOp.NE, x, x) : bool(false)));
        r.add("isinf", c -> unary(c, x -> x.dtype().isFloat() ? new Binary(BinaryOp.EQ, call(MathFn.FABS, x), new FloatImm(Double.POSITIVE_INFINITY, x.dtype())) : bool(false)));
        r.add("isfinite", c -> unary(c, x -> x.dtype().isFloat()
                ? new Binary(BinaryOp.EQ, x, x).and(new Binary(BinaryOp.NE, call(MathFn.FABS, x), new FloatImm(Double.POSITIVE_INFINITY, x.dtype())))
                : bool(true)));

        r.add("clip", ElementwiseComputes::clip);
        r.add("cast", c -> {
            CastAttrs a = c.attrs(CastAttrs.class);
            DType to = a.dtype();
            return unary(c, x -> x.dtype().equals(to) ? x : to.isBool() ? cast(x, to) : new Cast(to, x, a.saturate(), a.roundMode()));
        });
        r.add("where", ElementwiseComputes::where);
        // the same bits as another dtype of their width (the relation checked the widths)
        r.add("reinterpret", c -> {
            DType to = c.attrs(dev.relayfarm.ops.transform.Reinterpret.ReinterpretAttrs.class).dtype();
            return unary(c, x -> new BitCast(to, x));
        });

        // element-wise nn operators
        r.add("nn.relu", c -> unary(c, x -> leaky(x, 0.0)));
        r.add("nn.leaky_relu", c -> {
            double alpha = c.attrs(Activations.LeakyReluAttrs.class).alpha();
            return unary(c, x -> leaky(x, alpha));
        });
        r.add("nn.prelu", ElementwiseComputes::prelu);
        r.add("nn.bias_add", ElementwiseComputes::biasAdd);
    }

    // ---- building blocks ---------------------------------------------------------------------

    /** One output element per point of the declared output shape; inputs broadcast NumPy-style. */
    static List<Compute> binary(OpCall c, BinaryOperator<PrimExpr> f) {
        Tensor a = c.in(0), b = c.in(1);
        if (!a.dtype().equals(b.dtype())) throw c.fail("dtypes " + a.dtype() + " and " + b.dtype() + " do not match");
        List<Integer> shape = c.outShape();
        return List.of(Te.compute(c.name(), shape, ix -> f.apply(a.at(Elementwise.broadcastIndex(ix, a.shape())), b.at(Elementwise.broadcastIndex(ix, b.shape())))));
    }

    static List<Compute> unary(OpCall c, UnaryOperator<PrimExpr> f) {
        Tensor x = c.in(0);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> f.apply(x.at(ix))));
    }

    private static void floatUnary(OpComputes.Rules r, String op, UnaryOperator<PrimExpr> f) {
        r.add(op, c -> {
            if (!c.in(0).dtype().isFloat()) throw c.fail("expects a floating-point tensor, got " + c.in(0).dtype());
            return unary(c, f);
        });
    }

    static Call call(MathFn fn, PrimExpr... args) {
        return new Call(fn, List.of(args));
    }

    static IntImm bool(boolean v) {
        return new IntImm(v ? 1 : 0, DType.BOOL);
    }

    /** {@code x != 0} as bool. */
    static PrimExpr truth(PrimExpr x) {
        return new Binary(BinaryOp.NE, x, Te.zero(x.dtype()));
    }

    /** A bool condition as 0/1 of {@code dt}. */
    static PrimExpr boolIn(DType dt, PrimExpr cond) {
        if (dt.isBool()) return cond;
        return new Select(cond, Te.constant(dt, 1), Te.zero(dt));
    }

    /** Bool results of arithmetic are normalized to 0/1 (2 = true + true is true). */
    private static PrimExpr norm(OpCall c, PrimExpr v) {
        return v.dtype().isBool() ? truth(v) : v;
    }

    private static PrimExpr integer(OpCall c, PrimExpr operand, PrimExpr v) {
        if (operand.dtype().isFloat()) throw c.fail("expects an integer tensor, got " + operand.dtype());
        return v;
    }

    /** {@code v} as a C cast would convert it, except that bool means non-zero. */
    static PrimExpr cast(PrimExpr v, DType to) {
        if (v.dtype().equals(to)) return v;
        if (to.isBool()) return truth(v);
        return new Cast(to, v);
    }

    private static PrimExpr floatOrSame(PrimExpr x, MathFn fn) {
        return x.dtype().isFloat() ? call(fn, x) : x;
    }

    private static boolean isSigned(DType t) {
        return t.code() == DType.Code.INT;
    }

    private static PrimExpr floorDivide(PrimExpr a, PrimExpr b) {
        DType t = a.dtype();
        if (t.isFloat()) return call(MathFn.FLOOR, new Binary(BinaryOp.DIV, a, b));
        PrimExpr q = new Binary(BinaryOp.DIV, a, b);
        if (!isSigned(t)) return q;
        // C truncates: one less when there is a remainder and the signs differ
        PrimExpr adjust = truth(new Binary(BinaryOp.MOD, a, b)).and(new Binary(BinaryOp.NE, a.lt(Te.zero(t)), b.lt(Te.zero(t))));
        return new Select(adjust, new Binary(BinaryOp.SUB, q, Te.constant(t, 1)), q);
    }

    private static PrimExpr floorMod(PrimExpr a, PrimExpr b) {
        DType t = a.dtype();
        // Relay's float floor_mod is a - floor(a / b) * b, computed as the interpreter does
        if (t.isFloat()) return new Binary(BinaryOp.SUB, a, new Binary(BinaryOp.MUL, call(MathFn.FLOOR, new Binary(BinaryOp.DIV, a, b)), b));
        PrimExpr r = new Binary(BinaryOp.MOD, a, b);
        if (!isSigned(t)) return r;
        PrimExpr adjust = truth(r).and(new Binary(BinaryOp.NE, r.lt(Te.zero(t)), b.lt(Te.zero(t))));
        return new Select(adjust, new Binary(BinaryOp.ADD, r, b), r);
    }

    private static PrimExpr truncMod(PrimExpr a, PrimExpr b) {
        return a.dtype().isFloat() ? call(MathFn.FMOD, a, b) : new Binary(BinaryOp.MOD, a, b);
    }

    private static PrimExpr power(PrimExpr a, PrimExpr b) {
        DType t = a.dtype();
        if (t.isFloat()) return call(MathFn.POW, a, b);
        PrimExpr p = call(MathFn.POW, new Cast(DType.FLOAT64, a), new Cast(DType.FLOAT64, b));
        return t.isBool() ? truth(p) : new Cast(t, p);
    }

    private static PrimExpr minMax(BinaryOp op, PrimExpr a, PrimExpr b) {
        // rf_maxi/rf_mini compare as int64: uint64 values above 2^63 need an unsigned comparison
        if (a.dtype().equals(DType.UINT64)) return new Select(op == BinaryOp.MAX ? a.ge(b) : a.le(b), a, b);
        return new Binary(op, a, b);
    }

    private static PrimExpr abs(PrimExpr x) {
        DType t = x.dtype();
        if (t.isFloat()) return call(MathFn.FABS, x);
        if (!isSigned(t)) return x;
        return new Select(x.lt(Te.zero(t)), new Unary(UnaryOp.NEG, x), x);
    }

    private static PrimExpr sign(PrimExpr x) {
        DType t = x.dtype();
        PrimExpr zero = Te.zero(t), one = Te.constant(t, 1);
        if (t.isFloat()) return new Select(x.gt(zero), one, new Select(x.lt(zero), Te.constant(t, -1), x)); // 0, -0 and NaN stay
        if (!isSigned(t)) return boolIn(t, truth(x));
        return new Select(x.gt(zero), one, new Select(x.lt(zero), Te.constant(t, -1), zero));
    }

    /** {@code x < 0 ? slope * x : x}; float32 multiplies by the slope rounded to float, integers truncate. */
    private static PrimExpr leaky(PrimExpr x, double slope) {
        DType t = x.dtype();
        PrimExpr zero = Te.zero(t);
        if (slope == 0) return new Select(x.lt(zero), zero, x);
        PrimExpr scaled = t.isFloat()
                ? new Binary(BinaryOp.MUL, new FloatImm(t.bits() == 32 ? (float) slope : slope, t), x)
                : new Cast(t, new Binary(BinaryOp.MUL, new FloatImm(slope, DType.FLOAT64), new Cast(DType.FLOAT64, x)));
        return new Select(x.lt(zero), scaled, x);
    }

    /**
     * {@code clip}: floats clamp to the bounds rounded to the dtype; integers to the integers within
     * [a_min, a_max] (ceil/floor), a bound beyond the dtype's range being no bound.
     */
    private static List<Compute> clip(OpCall c) {
        ClipAttrs a = c.attrs(ClipAttrs.class);
        DType t = c.in(0).dtype();
        if (t.isFloat()) return unary(c, x -> new Binary(BinaryOp.MIN, new Binary(BinaryOp.MAX, x, new FloatImm(a.aMin(), t)), new FloatImm(a.aMax(), t)));
        double min = typeMin(t), max = typeMax(t);
        double lo = Math.ceil(a.aMin()), hi = Math.floor(a.aMax());
        return unary(c, x -> {
            PrimExpr v = x;
            if (lo > min) v = new Select(v.lt(new IntImm((long) lo, t)), new IntImm((long) lo, t), v);
            if (hi < max) {
                PrimExpr h = new IntImm((long) Math.max(hi, min), t);
                v = new Select(v.gt(h), h, v);
            }
            return v;
        });
    }

    private static double typeMin(DType t) {
        if (t.isBool() || t.code() == DType.Code.UINT) return 0;
        return -Math.pow(2, t.bits() - 1);
    }

    /** The largest value (as a double; uint64's 2^64 - 1 rounds up to 2^64, which is fine for "beyond"). */
    private static double typeMax(DType t) {
        if (t.isBool()) return 1;
        if (t.code() == DType.Code.UINT) return Math.pow(2, t.bits()) - 1;
        return Math.pow(2, t.bits() - 1) - 1;
    }

    private static List<Compute> where(OpCall c) {
        Tensor cond = c.in(0), x = c.in(1), y = c.in(2);
        if (!x.dtype().equals(y.dtype())) throw c.fail("dtypes " + x.dtype() + " and " + y.dtype() + " do not match");
        return List.of(Te.compute(c.name(), c.outShape(), ix -> new Select(
                truth(cond.at(Elementwise.broadcastIndex(ix, cond.shape()))),
                x.at(Elementwise.broadcastIndex(ix, x.shape())),
                y.at(Elementwise.broadcastIndex(ix, y.shape())))));
    }

    /** {@code nn.prelu}: {@code x < 0 ? alpha[c] * x : x} with {@code c} the index along {@code axis}. */
    private static List<Compute> prelu(OpCall c) {
        Tensor x = c.in(0), alpha = c.in(1);
        int axis = normalizeAxis(c, c.attrs(Activations.PReluAttrs.class).axis(), x.rank());
        DType t = x.dtype();
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr v = x.at(ix), s = alpha.at(ix.get(axis));
            PrimExpr scaled = t.isFloat() ? new Binary(BinaryOp.MUL, v, s)
                    : new Cast(t, new Binary(BinaryOp.MUL, new Cast(DType.FLOAT64, v), new Cast(DType.FLOAT64, s)));
            return new Select(v.lt(Te.zero(t)), scaled, v);
        }));
    }

    private static List<Compute> biasAdd(OpCall c) {
        Tensor x = c.in(0), bias = c.in(1);
        int axis = normalizeAxis(c, c.attrs(BiasAdd.BiasAddAttrs.class).axis(), x.rank());
        return List.of(Te.compute(c.name(), c.outShape(), ix -> norm(c, new Binary(BinaryOp.ADD, x.at(ix), bias.at(ix.get(axis))))));
    }

    /** A possibly negative axis of a rank-{@code rank} tensor, checked. */
    static int normalizeAxis(OpCall c, long axis, int rank) {
        long a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank) throw c.fail("axis must be in [" + -rank + ", " + (rank - 1) + "], got " + axis);
        return (int) a;
    }
}
