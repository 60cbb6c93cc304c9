package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.HalfFloats;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Relay operator name -> tensor-expression compute definition(s): the registry that lets any fused
 * Primitive group be lowered to C. Each operator's rule lives in its family's file
 * ({@link ElementwiseComputes}, {@link TransformComputes}, {@link ReductionComputes},
 * {@link NnComputes}, {@link PoolComputes}, {@link ConvComputes}, {@link NormComputes},
 * {@link ImageComputes}, {@link AlgorithmComputes}, {@link LossComputes}, {@link ScatterComputes}); this class only dispatches, validates and exposes them.
 *
 * <pre>{@code
 * Placeholder x = Te.placeholder("x", List.of(2, 3), DType.FLOAT32);
 * List<Compute> out = OpComputes.compute("nn.relu", List.of(x), Attrs.EMPTY, TensorType.of(DType.FLOAT32, 2, 3));
 * }</pre>
 *
 * <p>Semantics are the interpreter's: attributes are parsed by the operator's own attrs parser
 * ({@link OpDef#parseAttrs}), and every rule is tested element by element against the operator's
 * reference kernel. The declared output type (from type inference) is authoritative for output
 * shapes and dtypes. Tuple results are flattened: one {@link Compute} per field, in order.
 *
 * <p>Not covered: operators whose output shape depends on input values ({@code argwhere},
 * {@code unique}, {@code non_max_suppression}), {@code nn.contrib_conv2d_NCHWc} (kernel/lower's template), as listed by
 * {@code OpComputesCoverageTest}; {@link #supports} says false for them and {@link #compute} throws
 * {@link UnsupportedOperationException} naming the operator. float16/bfloat16 are computed in
 * float32 and rounded (see {@code HALF_OPS}); unsupported dtypes (vectors, other widths) and attributes also throw, naming the operator and the reason.
 */
public final class OpComputes {
    private static final Map<String, OpCompute> RULES = build();

    private OpComputes() {}

    /** Collects the family rules; a duplicate or an operator the registry does not know fails fast. */
    static final class Rules {
        private final Map<String, OpCompute> rules = new LinkedHashMap<>();

        void add(String op, OpCompute rule) {
            if (OpRegistry.find(op).isEmpty()) throw new IllegalStateException("compute rule for unknown operator " + op);
            if (rules.putIfAbsent(op, rule) != null) throw new IllegalStateException("compute rule for " + op + " registered twice");
        }
    }

    private static Map<String, OpCompute> build() {
        Rules r = new Rules();
        ElementwiseComputes.register(r);
        TransformComputes.register(r);
        ReductionComputes.register(r);
        NnComputes.register(r);
        PoolComputes.register(r);
        ConvComputes.register(r);
        NormComputes.register(r);
        ImageComputes.register(r);
        AlgorithmComputes.register(r);
        LossComputes.register(r);
        ScatterComputes.register(r);
        return Collections.unmodifiableMap(r.rules);
    }

    public static boolean supports(String op) {
        return RULES.containsKey(op);
    }

    /** Every operator with a compute rule, in registration order. */
    public static Set<String> supportedOps() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(RULES.keySet()));
    }

    /** The operator's fusion/scheduling kind (the {@link OpPattern} it is registered with). */
    public static OpPattern pattern(String op) {
        return OpRegistry.get(op).pattern();
    }

    /**
     * The compute definitions of {@code op} applied to {@code inputs} (tuple arguments flattened),
     * producing {@code outType} (a tensor type, or a tuple of tensor types for multi-output operators):
     * one {@link Compute} per output tensor. Intermediate stages (a padded input, a packed weight) are
     * reachable from the returned computes through their bodies.
     *
     * @throws UnsupportedOperationException naming the operator when it has no compute, or when a dtype,
     *     shape or attribute is outside what the rule supports
     */
    public static List<Compute> compute(String op, List<Tensor> inputs, Attrs attrs, Type outType) {
        OpCompute rule = RULES.get(op);
        if (rule == null) {
            String why = OpRegistry.find(op).isPresent() ? "no compute definition for this operator" : "unknown operator";
            throw new UnsupportedOperationException(op + ": " + why);
        }
        OpDef<?> def = OpRegistry.get(op);
        List<TensorType> outs = new ArrayList<>();
        flatten(op, outType, outs);
        for (TensorType t : outs) {
            OpCall.staticShape(op, t);
            checkDtype(op, t.dtype());
        }
        for (Tensor t : inputs) checkDtype(op, t.dtype());
        boolean widen = !HALF_OPS.contains(op) && (inputs.stream().anyMatch(t -> HalfFloats.isNarrow(t.dtype())) || outs.stream().anyMatch(t -> HalfFloats.isNarrow(t.dtype())));
        List<Compute> result = widen ? widened(op, rule, inputs, def.parseAttrs(attrs), outs) : rule.apply(new OpCall(op, inputs, def.parseAttrs(attrs), outs));
        if (result.size() != outs.size()) throw new IllegalStateException(op + ": compute rule gave " + result.size() + " outputs for " + outs.size() + " output types");
        for (int i = 0; i < outs.size(); i++) {
            Compute c = result.get(i);
            List<Integer> expected = OpCall.staticShape(op, outs.get(i));
            if (!c.shape().equals(expected) || !c.dtype().equals(outs.get(i).dtype())) {
                throw new IllegalStateException(op + ": compute rule gave " + c.dtype() + c.shape() + " for output " + i + " of type " + outs.get(i));
            }
        }
        return result;
    }

    /**
     * An operator outside {@link #HALF_OPS} on float16/bfloat16: its float32 compute over the inputs
     * widened to float32 (exact), each 16-bit-float output rounded once at the end. The interpreter
     * also widens and rounds once, but may compute in float64 (math functions, matmul and conv
     * accumulation): results agree within float32 rounding before the final rounding, so mostly bit
     * for bit and otherwise by one 16-bit-float ulp, not always exactly.
     */
    private static List<Compute> widened(String op, OpCompute rule, List<Tensor> inputs, Object attrs, List<TensorType> outs) {
        List<Tensor> wide = new ArrayList<>();
        for (Tensor t : inputs) {
            wide.add(HalfFloats.isNarrow(t.dtype()) ? Te.compute(t.name() + "_f32", t.shape(), ix -> new Cast(DType.FLOAT32, t.at(ix))) : t);
        }
        List<TensorType> wideOuts = new ArrayList<>();
        for (TensorType t : outs) wideOuts.add(HalfFloats.isNarrow(t.dtype()) ? new TensorType(t.shape(), DType.FLOAT32) : t);
        List<Compute> result = rule.apply(new OpCall(op, wide, attrs, wideOuts));
        List<Compute> narrowed = new ArrayList<>();
        for (int i = 0; i < result.size(); i++) {
            Compute c = result.get(i);
            DType to = i < outs.size() ? outs.get(i).dtype() : c.dtype();
            narrowed.add(HalfFloats.isNarrow(to) ? Te.compute(c.name() + "_narrow", c.shape(), ix -> new Cast(to, c.at(ix))) : c);
        }
        return narrowed;
    }

    private static void flatten(String op, Type t, List<TensorType> out) {
        switch (t) {
            case TensorType tt -> out.add(tt);
            case TupleType tu -> {
                for (Type f : tu.fields()) flatten(op, f, out);
            }
            default -> throw new UnsupportedOperationException(op + ": no compute for a result of type " + t);
        }
    }

    /**
     * Operators whose compute on float16/bfloat16 matches the interpreter bit for bit: the C emitter
     * widens 16-bit floats to float32, computes, and rounds every 16-bit-float result back, which is
     * what the interpreter's kernels for these do (casts round once from the source value; the
     * arithmetic widens to float32 and rounds each result). Others (the math functions, which the
     * interpreter evaluates in float64; reductions, which accumulate wider) compute in float32 over
     * widened inputs and round once ({@link #widened}).
     */
    private static final Set<String> HALF_OPS = Set.of("cast", "cast_like", "reinterpret", "add", "subtract", "multiply", "divide", "maximum", "minimum",
            "negative", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "where", "nn.relu",
            "reshape", "transpose", "squeeze", "expand_dims", "copy", "broadcast_to", "concatenate", "strided_slice", "take");

    private static void checkDtype(String op, DType t) {
        boolean half = HalfFloats.isNarrow(t);
        if (t.lanes() != 1 || !half && t.code() == DType.Code.FLOAT && t.bits() != 32 && t.bits() != 64) {
            throw new UnsupportedOperationException(op + ": dtype " + t + " is not supported by the C kernels (scalar float16/bfloat16/float32/float64, integers and bool are)");
        }
    }

    /**
     * A simple sound schedule for the kernel producing {@code outputs}: every stage reachable from them
     * (intermediates included) is materialized; an injective stage is fused flat, its outer part
     * parallel and its inner part vectorized ({@link Elementwise#injectiveSchedule}); a reduction stage
     * runs its outermost data axis in parallel. Performance schedules are {@code kernel/lower}'s job.
     */
    public static Schedule defaultSchedule(List<Compute> outputs) {
        List<Primitive> ps = new ArrayList<>();
        for (Compute c : stages(outputs)) {
            if (c.isReduction()) {
                if (!c.axes().isEmpty() && c.axes().getFirst().extent() > 1) ps.add(new Primitive.Parallel(c.name(), c.axes().getFirst().name()));
            } else if (!c.axes().isEmpty()) {
                ps.addAll(Elementwise.injectiveSchedule(c).primitives());
            }
        }
        return new Schedule(ps);
    }

    /** Every compute reachable from {@code outputs}, producers first. */
    public static List<Compute> stages(List<Compute> outputs) {
        List<Compute> order = new ArrayList<>();
        Set<Long> seen = new java.util.HashSet<>();
        for (Compute c : outputs) visit(c, seen, order);
        return order;
    }

    private static void visit(Compute c, Set<Long> seen, List<Compute> order) {
        if (!seen.add(c.id())) return;
        for (Tensor t : c.inputs()) if (t instanceof Compute d) visit(d, seen, order);
        order.add(c);
    }

    /** The placeholders the computes read (kernel parameters), each once, in first-use order. */
    public static List<Placeholder> placeholders(List<Compute> outputs) {
        Map<Long, Placeholder> seen = new LinkedHashMap<>();
        for (Compute c : stages(outputs)) for (Tensor t : c.inputs()) if (t instanceof Placeholder p) seen.putIfAbsent(p.id(), p);
        return new ArrayList<>(seen.values());
    }

    static List<String> axisNames(Compute c) {
        return c.axes().stream().map(IterVar::name).toList();
    }
}
