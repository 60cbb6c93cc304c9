package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.ElementwiseKernels.BinaryFn;
import dev.relayfarm.ops.ElementwiseKernels.CompareFn;
import dev.relayfarm.ops.ElementwiseKernels.DoubleBiPredicate;
import dev.relayfarm.ops.ElementwiseKernels.LongBiPredicate;
import dev.relayfarm.ops.ElementwiseKernels.PredicateFn;
import dev.relayfarm.ops.ElementwiseKernels.UnaryFn;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleBinaryOperator;
import java.util.function.DoublePredicate;
import java.util.function.DoubleUnaryOperator;
import java.util.function.LongBinaryOperator;
import java.util.function.LongPredicate;
import java.util.function.LongUnaryOperator;

/**
 * Element-wise and broadcasting operators (add, exp, where, cast, ...), with Relay's names,
 * attributes and semantics:
 * <ul>
 *   <li>binary ops broadcast like numpy ({@link Broadcast}) and need equal dtypes; comparisons give
 *       bool, logical_and/or/xor keep the input dtype (as Relay's BroadcastRel does);
 *   <li>integer {@code divide}/{@code trunc_divide} truncate toward zero and {@code mod}/{@code trunc_mod}
 *       take the dividend's sign (C), {@code floor_divide}/{@code floor_mod} round toward −∞ (Python);
 *       integer division by zero is an error (C leaves it undefined);
 *   <li>{@code round} rounds half away from zero, as Relay's lowers to C {@code round}; ONNX's
 *       half-to-even Round is a different function;
 *   <li>{@code maximum}/{@code minimum} propagate NaN;
 *   <li>transcendental ops accept floating-point tensors only, bitwise ops and shifts integers only
 *       ({@link DTypeRule}); the rest accept every dtype, bool included.
 * </ul>
 */
public final class ElementwiseOps {
    private ElementwiseOps() {}

    private static final List<OpDef<?>> DEFS = build();

    /** Every operator of this family, in registration order (also what the coverage test iterates). */
    public static List<OpDef<?>> defs() {
        return DEFS;
    }

    private static List<OpDef<?>> build() {
        List<OpDef<?>> ops = new ArrayList<>();

        // Arithmetic: (name, real, signed, unsigned). Unsigned values sit in a long as raw bits.
        ops.add(binary("add", (a, b) -> a + b, Long::sum, Long::sum, DTypeRule.ANY));
        ops.add(binary("subtract", (a, b) -> a - b, (a, b) -> a - b, (a, b) -> a - b, DTypeRule.ANY));
        ops.add(binary("multiply", (a, b) -> a * b, (a, b) -> a * b, (a, b) -> a * b, DTypeRule.ANY));
        ops.add(binary("divide", (a, b) -> a / b,
                (a, b) -> a / ScalarMath.checkDivisor(b, "divide"),
                (a, b) -> Long.divideUnsigned(a, ScalarMath.checkDivisor(b, "divide")), DTypeRule.ANY));
        ops.add(binary("trunc_divide", (a, b) -> a / b,
                (a, b) -> a / ScalarMath.checkDivisor(b, "trunc_divide"),
                (a, b) -> Long.divideUnsigned(a, ScalarMath.checkDivisor(b, "trunc_divide")), DTypeRule.ANY));
        ops.add(binary("floor_divide", (a, b) -> Math.floor(a / b),
                (a, b) -> Math.floorDiv(a, ScalarMath.checkDivisor(b, "floor_divide")),
                (a, b) -> Long.divideUnsigned(a, ScalarMath.checkDivisor(b, "floor_divide")), DTypeRule.ANY));
        // Relay's float floor_mod is a - floor(a / b) * b; we compute the same formula.
        ops.add(binary("floor_mod", (a, b) -> a - Math.floor(a / b) * b,
                (a, b) -> Math.floorMod(a, ScalarMath.checkDivisor(b, "floor_mod")),
                (a, b) -> Long.remainderUnsigned(a, ScalarMath.checkDivisor(b, "floor_mod")), DTypeRule.ANY));
        ops.add(binary("mod", (a, b) -> a % b,
                (a, b) -> a % ScalarMath.checkDivisor(b, "mod"),
                (a, b) -> Long.remainderUnsigned(a, ScalarMath.checkDivisor(b, "mod")), DTypeRule.ANY));
        ops.add(binary("trunc_mod", (a, b) -> a % b,
                (a, b) -> a % ScalarMath.checkDivisor(b, "trunc_mod"),
                (a, b) -> Long.remainderUnsigned(a, ScalarMath.checkDivisor(b, "trunc_mod")), DTypeRule.ANY));
        ops.add(binary("power", Math::pow,
                (a, b) -> ScalarMath.ipow(a, b, false, "power"),
                (a, b) -> ScalarMath.ipow(a, b, true, "power"), DTypeRule.ANY));
        ops.add(binary("maximum", Math::max, Math::max, (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b, DTypeRule.ANY));
        ops.add(binary("minimum", Math::min, Math::min, (a, b) -> Long.compareUnsigned(a, b) <= 0 ? a : b, DTypeRule.ANY));

        // Logical ops keep the input dtype (Relay's BroadcastRel), producing 0/1 in it.
        ops.add(binary("logical_and", (a, b) -> a != 0 && b != 0 ? 1 : 0, (a, b) -> a != 0 && b != 0 ? 1 : 0,
                (a, b) -> a != 0 && b != 0 ? 1 : 0, DTypeRule.ANY));
        ops.add(binary("logical_or", (a, b) -> a != 0 || b != 0 ? 1 : 0, (a, b) -> a != 0 || b != 0 ? 1 : 0,
                (a, b) -> a != 0 || b != 0 ? 1 : 0, DTypeRule.ANY));
        ops.add(binary("logical_xor", (a, b) -> (a != 0) != (b != 0) ? 1 : 0, (a, b) -> (a != 0) != (b != 0) ? 1 : 0,
                (a, b) -> (a != 0) != (b != 0) ? 1 : 0, DTypeRule.ANY));

        ops.add(binary("bitwise_and", null, (a, b) -> a & b, (a, b) -> a & b, DTypeRule.INTEGER_OR_BOOL));
        ops.add(binary("bitwise_or", null, (a, b) -> a | b, (a, b) -> a | b, DTypeRule.INTEGER_OR_BOOL));
        ops.add(binary("bitwise_xor", null, (a, b) -> a ^ b, (a, b) -> a ^ b, DTypeRule.INTEGER_OR_BOOL));
        ops.add(binary("left_shift", null, (a, b) -> a << b, (a, b) -> a << b, DTypeRule.INTEGER));
        // Arithmetic shift for intN; uintN values are zero-extended, so the logical shift is right for them.
        ops.add(binary("right_shift", null, (a, b) -> a >> b, (a, b) -> a >>> b, DTypeRule.INTEGER));

        // equal/not_equal also compare string tensors (exact text, no normalization); the ordered comparisons do not.
        ops.add(compare("equal", (a, b) -> a == b, (a, b) -> a == b, (a, b) -> a == b, String::equals));
        ops.add(compare("not_equal", (a, b) -> a != b, (a, b) -> a != b, (a, b) -> a != b, (a, b) -> !a.equals(b)));
        ops.add(compare("less", (a, b) -> a < b, (a, b) -> a < b, (a, b) -> Long.compareUnsigned(a, b) < 0, null));
        ops.add(compare("less_equal", (a, b) -> a <= b, (a, b) -> a <= b, (a, b) -> Long.compareUnsigned(a, b) <= 0, null));
        ops.add(compare("greater", (a, b) -> a > b, (a, b) -> a > b, (a, b) -> Long.compareUnsigned(a, b) > 0, null));
        ops.add(compare("greater_equal", (a, b) -> a >= b, (a, b) -> a >= b, (a, b) -> Long.compareUnsigned(a, b) >= 0, null));

        // Unary ops valid on every dtype: (name, real, signed, unsigned).
        ops.add(unary("negative", x -> -x, x -> -x, x -> -x, DTypeRule.ANY));
        ops.add(unary("abs", Math::abs, Math::abs, x -> x, DTypeRule.ANY));
        ops.add(unary("sign", Math::signum, Long::signum, x -> x != 0 ? 1 : 0, DTypeRule.ANY));
        ops.add(unary("floor", Math::floor, x -> x, x -> x, DTypeRule.ANY));
        ops.add(unary("ceil", Math::ceil, x -> x, x -> x, DTypeRule.ANY));
        ops.add(unary("round", ScalarMath::round, x -> x, x -> x, DTypeRule.ANY));
        ops.add(unary("trunc", x -> x < 0 ? Math.ceil(x) : Math.floor(x), x -> x, x -> x, DTypeRule.ANY));
        ops.add(unary("logical_not", x -> x == 0 ? 1 : 0, x -> x == 0 ? 1 : 0, x -> x == 0 ? 1 : 0, DTypeRule.ANY));
        ops.add(unary("bitwise_not", null, x -> ~x, x -> ~x, DTypeRule.INTEGER));

        // Floating-point-only unary ops.
        ops.add(floatUnary("exp", Math::exp));
        ops.add(floatUnary("log", Math::log));
        ops.add(floatUnary("log2", ScalarMath::log2));
        ops.add(floatUnary("log10", Math::log10));
        ops.add(floatUnary("sqrt", Math::sqrt));
        ops.add(floatUnary("rsqrt", x -> 1 / Math.sqrt(x)));
        ops.add(floatUnary("sigmoid", ScalarMath::sigmoid));
        ops.add(floatUnary("erf", ScalarMath::erf));
        ops.add(floatUnary("tanh", Math::tanh));
        ops.add(floatUnary("sinh", Math::sinh));
        ops.add(floatUnary("cosh", Math::cosh));
        ops.add(floatUnary("sin", Math::sin));
        ops.add(floatUnary("cos", Math::cos));
        ops.add(floatUnary("tan", Math::tan));
        ops.add(floatUnary("asin", Math::asin));
        ops.add(floatUnary("acos", Math::acos));
        ops.add(floatUnary("atan", Math::atan));
        ops.add(floatUnary("asinh", ScalarMath::asinh));
        ops.add(floatUnary("acosh", ScalarMath::acosh));
        ops.add(floatUnary("atanh", ScalarMath::atanh));

        // Tests with a bool result; integers are never NaN or infinite.
        ops.add(predicate("isnan", Double::isNaN, x -> false));
        ops.add(predicate("isinf", Double::isInfinite, x -> false));
        ops.add(predicate("isfinite", Double::isFinite, x -> true));

        ops.add(clip());
        ops.add(cast());
        ops.add(where());
        return List.copyOf(ops);
    }

    // ---- binary ----------------------------------------------------------------------------

    private static OpDef<NoAttrs> binary(String name, DoubleBinaryOperator real, LongBinaryOperator signed,
                                         LongBinaryOperator unsigned, DTypeRule rule) {
        BinaryFn f = new BinaryFn(real, signed, unsigned);
        return new OpDef<>(name, 2, a -> NoAttrs.parse(name, a), broadcastRelation(name, rule, false),
                OpPattern.BROADCAST, (in, attrs) -> {
                    check(name, rule, in.get(0).dtype());
                    return List.of(ElementwiseKernels.binary(name, in.get(0), in.get(1), f));
                });
    }

    private static OpDef<NoAttrs> compare(String name, DoubleBiPredicate real, LongBiPredicate signed, LongBiPredicate unsigned,
                                          java.util.function.BiPredicate<String, String> text) {
        CompareFn f = new CompareFn(real, signed, unsigned, text);
        return new OpDef<>(name, 2, a -> NoAttrs.parse(name, a), broadcastRelation(name, DTypeRule.ANY, true),
                OpPattern.BROADCAST, (in, attrs) -> List.of(ElementwiseKernels.compare(name, in.get(0), in.get(1), f)));
    }

    /** Relay's BroadcastRel ({@code bool} result = BroadcastCompRel): equal dtypes, broadcast shapes. */
    private static TypeRelationFn<NoAttrs> broadcastRelation(String name, DTypeRule rule, boolean boolResult) {
        return (types, numInputs, attrs, reporter) -> {
            TensorType a = OpTypes.tensor(name, types.get(0), reporter);
            TensorType b = OpTypes.tensor(name, types.get(1), reporter);
            if (a == null || b == null) return false;
            if (!a.dtype().equals(b.dtype())) {
                throw new RelationException(name + ": dtypes " + a.dtype() + " and " + b.dtype() + " do not match");
            }
            if (!rule.accepts(a.dtype())) throw new RelationException(rule.complaint(name, a.dtype()));
            List<Dim> shape = Broadcast.shape(name, a.shape(), b.shape());
            reporter.assign(types.get(numInputs), new TensorType(shape, boolResult ? DType.BOOL : a.dtype()));
            return true;
        };
    }

    // ---- unary -----------------------------------------------------------------------------

    private static OpDef<NoAttrs> unary(String name, DoubleUnaryOperator real, LongUnaryOperator signed,
                                        LongUnaryOperator unsigned, DTypeRule rule) {
        UnaryFn f = new UnaryFn(real, signed, unsigned);
        return new OpDef<>(name, 1, a -> NoAttrs.parse(name, a), identityRelation(name, rule, null),
                OpPattern.ELEMWISE, (in, attrs) -> {
                    check(name, rule, in.get(0).dtype());
                    return List.of(ElementwiseKernels.unary(name, in.get(0), f));
                });
    }

    private static OpDef<NoAttrs> floatUnary(String name, DoubleUnaryOperator real) {
        return unary(name, real, null, null, DTypeRule.FLOAT);
    }

    private static OpDef<NoAttrs> predicate(String name, DoublePredicate real, LongPredicate integer) {
        PredicateFn f = new PredicateFn(real, integer);
        return new OpDef<>(name, 1, a -> NoAttrs.parse(name, a), identityRelation(name, DTypeRule.ANY, DType.BOOL),
                OpPattern.ELEMWISE, (in, attrs) -> List.of(ElementwiseKernels.predicate(in.get(0), f)));
    }

    /** Relay's IdentityRel: the output has the input's shape, and its dtype unless {@code dtype} is given. */
    private static <A> TypeRelationFn<A> identityRelation(String name, DTypeRule rule, DType dtype) {
        return (types, numInputs, attrs, reporter) -> {
            TensorType x = OpTypes.tensor(name, types.get(0), reporter);
            if (x == null) return false;
            if (!rule.accepts(x.dtype())) throw new RelationException(rule.complaint(name, x.dtype()));
            reporter.assign(types.get(numInputs), new TensorType(x.shape(), dtype == null ? x.dtype() : dtype));
            return true;
        };
    }

    private static void check(String name, DTypeRule rule, DType t) {
        if (!rule.accepts(t)) throw new IllegalArgumentException(rule.complaint(name, t));
    }

    /**
     * {@code clip}: bounds are doubles; on integers the effective bounds are ceil(a_min) and
     * floor(a_max) (the integers within [a_min, a_max]), saturated to the long range.
     */
    private static OpDef<ClipAttrs> clip() {
        return new OpDef<>("clip", 1, ClipAttrs::parse, identityRelation("clip", DTypeRule.ANY, null), OpPattern.ELEMWISE,
                (in, attrs) -> {
                    double lo = attrs.aMin();
                    double hi = attrs.aMax();
                    long ilo = (long) Math.ceil(lo);
                    long ihi = (long) Math.floor(hi);
                    long ulo = Math.max(0, ilo);
                    long uhi = hi >= 0x1p64 ? -1L : hi >= 0x1p63 ? (long) (Math.floor(hi) - 0x1p63) ^ Long.MIN_VALUE : ihi;
                    UnaryFn f = new UnaryFn(
                            x -> Math.min(Math.max(x, lo), hi),
                            x -> Math.min(Math.max(x, ilo), ihi),
                            x -> Long.compareUnsigned(x, ulo) < 0 ? ulo : Long.compareUnsigned(x, uhi) > 0 ? uhi : x);
                    return List.of(ElementwiseKernels.unary("clip", in.get(0), f));
                });
    }

    /** {@code cast}: Relay registers it as an element-wise op; see {@link ElementwiseKernels#cast} for conversions. */
    private static OpDef<CastAttrs> cast() {
        return new OpDef<>("cast", 1, CastAttrs::parse,
                (types, numInputs, attrs, reporter) -> {
                    TensorType x = OpTypes.tensor("cast", types.get(0), reporter);
                    if (x == null) return false;
                    if (attrs.dtype().isString()) throw new RelationException("cast: casting " + x.dtype() + " to string is not supported");
                    reporter.assign(types.get(numInputs), new TensorType(x.shape(), attrs.dtype()));
                    return true;
                },
                OpPattern.ELEMWISE, (in, attrs) -> List.of(ElementwiseKernels.cast(in.get(0), attrs.dtype(), attrs.saturate(), attrs.roundMode())));
    }

    /** {@code where(cond, x, y)}: x and y share a dtype, all three broadcast together; cond may be any dtype (non-zero = true). */
    private static OpDef<NoAttrs> where() {
        return new OpDef<>("where", 3, a -> NoAttrs.parse("where", a),
                (types, numInputs, attrs, reporter) -> {
                    TensorType c = OpTypes.tensor("where", types.get(0), reporter);
                    TensorType x = OpTypes.tensor("where", types.get(1), reporter);
                    TensorType y = OpTypes.tensor("where", types.get(2), reporter);
                    if (c == null || x == null || y == null) return false;
                    if (!x.dtype().equals(y.dtype())) {
                        throw new RelationException("where: dtypes " + x.dtype() + " and " + y.dtype() + " do not match");
                    }
                    List<Dim> shape = Broadcast.shape("where", Broadcast.shape("where", c.shape(), x.shape()), y.shape());
                    reporter.assign(types.get(numInputs), new TensorType(shape, x.dtype()));
                    return true;
                },
                OpPattern.BROADCAST, (in, attrs) -> List.of(ElementwiseKernels.where(in.get(0), in.get(1), in.get(2))));
    }
}
