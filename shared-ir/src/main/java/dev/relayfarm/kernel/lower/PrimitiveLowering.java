package dev.relayfarm.kernel.lower;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.compute.OpComputes;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.schedule.ScheduleException;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.Registers;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.kernel.template.InjectiveTemplate;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ReductionTemplate;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.kernel.template.ScheduleTemplate;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Lowers one fused Primitive function (a FuseOps group) to one kernel.
 *
 * <p>Steps: (1) the group is typed and its dataflow walked in post-order (iteratively), each operator
 * call becoming tensor-expression computes: anchors with a template ({@link Anchors}) build their own,
 * the rest come from the op's compute definition; parameters become placeholders (tuple parameters
 * flattened), scalar constants literal computes. (2) The anchor is chosen: the templated op (conv2d,
 * NCHWc conv2d, dense), else the last reduction (pooling, reductions, ops without a template), else
 * none (an injective group). (3) Scheduling: every non-output injective compute is inlined (injective
 * producers and epilogue intermediates alike); the anchor's template tiles the group's output and
 * computes the anchor at that tile ({@code bias + relu} after a convolution then costs a few vector
 * instructions per register tile, nothing is materialized); other reductions get the reduction
 * template's default at the root. When the output is not an element-wise image of the anchor (a
 * layout change, several outputs) or bound inference cannot place the anchor in the output's tile,
 * the anchor keeps its own tile and the outputs get the injective template. {@link #plan} stops after
 * step (2), which is all a schedule choice needs; {@link #lower(KernelPlan, ScheduleConfig)} runs all three
 * for one configuration (step (1) again, as the configuration can select the template and shape its stages).
 *
 * <p>Not done here: groups with let bindings, control flow or calls of functions (FuseOps makes none),
 * dynamic shapes, tensor constants larger than {@value #MAX_INLINE_CONSTANT} elements (FuseOps passes
 * them as parameters).
 */
public final class PrimitiveLowering {
    static final int MAX_INLINE_CONSTANT = 64;

    private final String name;
    private final Renamer names = new Renamer();
    private final List<Placeholder> inputs = new ArrayList<>();
    private final List<ScheduleTemplate> templates = new ArrayList<>();
    /** Computes made for each op call, in post-order: the candidates for the reduction anchor. */
    private final List<Compute> reductions = new ArrayList<>();
    private final Optional<ScheduleConfig> config;
    /** The register file the anchor's template budgets its tile for: the target's. */
    private final Registers registers;

    /**
     * Bound true while lowering for a kernel over a dynamic size ({@link WidthKernels}): an output scheduled on its own
     * takes the injective template's inner form where it has two axes or more, as the flat form's per-element division
     * by each outer extent is a real division once the extents are run-time values.
     */
    static final ScopedValue<Boolean> INNER_OUTPUTS = ScopedValue.newInstance();

    private PrimitiveLowering(String name, Optional<ScheduleConfig> config, Target target) {
        this.name = name;
        this.config = config;
        this.registers = Registers.of(target);
    }

    /**
     * What lowering {@code primitive} as the kernel {@code name} (a C identifier) would schedule, without
     * lowering it: the anchor's workload key, template, configuration space and default configuration.
     * Only the group's tensor expressions are built (no schedule, no loop nest); the key is the one
     * {@link #lower(KernelPlan, ScheduleConfig)} reports for any configuration, because it is computed
     * from the operators, shapes and attributes alone. Unsupported operators and forms are
     * {@link UnsupportedOperationException}s naming the op and the group.
     */
    public static KernelPlan plan(Function primitive, String name, Target target) {
        PrimitiveLowering p = new PrimitiveLowering(name, Optional.empty(), target);
        ScheduleTemplate anchor = p.anchor(p.build(primitive));
        return new KernelPlan(name, primitive, target, anchor.workload(), anchor.name(), anchor.space(), anchor.defaultConfig());
    }

    /**
     * The kernel of {@code plan} scheduled with {@code config}, reported to the {@link LoweringObserver}
     * bound in this scope. A config that does not fit is an {@link InvalidConfigException}; a form the
     * loop lowering does not cover an {@link UnsupportedOperationException}.
     */
    public static LoweredKernel lower(KernelPlan plan, ScheduleConfig config) {
        PrimitiveLowering p = new PrimitiveLowering(plan.name(), Optional.of(config), plan.target());
        List<Compute> outputs = p.build(plan.primitive());
        LoweredKernel k = p.schedule(outputs, p.anchor(outputs), config);
        LoweringObserver.current().lowered(plan, config);
        return k;
    }

    /** {@link #plan} then {@link #lower(KernelPlan, ScheduleConfig)} with {@code config}, the default when empty. */
    public static LoweredKernel lower(Function primitive, String name, Target target, Optional<ScheduleConfig> config) {
        KernelPlan plan = plan(primitive, name, target);
        return lower(plan, config.orElse(plan.defaultConfig()));
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException("group " + name + ": " + what);
    }

    /** The group's tensor expressions: its output computes, the inputs and templates recorded on the way. */
    private List<Compute> build(Function primitive) {
        InferResult types = TypeInference.inferExpr(primitive, OpResolver.REGISTRY);
        Function fn = types.module().main().orElseThrow();
        Map<Expr, GroupValue> values = new IdentityHashMap<>();
        for (int i = 0; i < fn.params().size(); i++) {
            Var p = fn.params().get(i);
            values.put(p, placeholders("p" + i, types.typeOf(p)));
        }
        for (Expr e : ExprTraversal.postOrder(fn.body())) {
            if (values.containsKey(e)) continue;
            values.put(e, switch (e) {
                case Constant c -> new GroupValue.One(constant(c));
                case Tuple t -> new GroupValue.Tuple(t.fields().stream().map(values::get).toList());
                case TupleGetItem g -> {
                    if (!(values.get(g.tuple()) instanceof GroupValue.Tuple t)) throw new IllegalStateException("projection of a non-tuple in group " + name);
                    yield t.fields().get(g.index());
                }
                case Call c when c.callee() instanceof Op op -> call(op.name(), c, values, types.typeOf(c));
                case Op op -> null;
                case Var v -> throw unsupported("%" + v.name() + " is not a parameter (Let nodes and local variables are not supported in a fused group)");
                default -> throw unsupported(e.getClass().getSimpleName() + " nodes are not supported in a fused group (only operator calls, tuples, projections, constants)");
            });
        }
        return outputs(values.get(fn.body()).flatten());
    }

    private GroupValue placeholders(String base, Type t) {
        return switch (t) {
            case TensorType tt -> {
                List<Integer> shape = staticShape(tt, base);
                Placeholder p = Te.placeholder(names.fresh(base), shape, tt.dtype());
                names.keep(p);
                inputs.add(p);
                yield new GroupValue.One(p);
            }
            case TupleType tup -> {
                List<GroupValue> fields = new ArrayList<>();
                for (int i = 0; i < tup.fields().size(); i++) fields.add(placeholders(base + "_" + i, tup.fields().get(i)));
                yield new GroupValue.Tuple(fields);
            }
            default -> throw unsupported("parameter of type " + t + " (only tensors and tuples of tensors)");
        };
    }

    private List<Integer> staticShape(TensorType t, String what) {
        List<Integer> shape = new ArrayList<>();
        for (Dim d : t.shape()) {
            if (!(d instanceof Dim.Int(long v))) throw unsupported(what + " has a dynamic shape " + t + " (kernels need static shapes)");
            shape.add((int) v);
        }
        return shape;
    }

    private Tensor constant(Constant c) {
        NDArray a = c.data();
        int n = NDArray.elementCount(a.dtype(), a.shape());
        if (n > MAX_INLINE_CONSTANT) {
            throw unsupported("tensor constant of shape " + java.util.Arrays.toString(a.shape()) + " inside the group (pass it as a parameter; at most "
                    + MAX_INLINE_CONSTANT + " elements are inlined)");
        }
        double[] v = new double[n];
        for (int i = 0; i < n; i++) v[i] = a.getDouble(i);
        List<Integer> shape = java.util.Arrays.stream(a.shape()).boxed().toList();
        DType dt = a.dtype();
        Compute k = Te.compute(names.fresh("const"), shape, ix -> {
            PrimExpr flat = PrimExpr.of(0);
            for (int d = 0; d < ix.size(); d++) flat = flat.mul(shape.get(d)).add(ix.get(d));
            PrimExpr body = literal(dt, v[n - 1]);
            for (int i = n - 2; i >= 0; i--) body = new Select(flat.lt(PrimExpr.of(i + 1)), literal(dt, v[i]), body);
            return body;
        });
        names.keep(k);
        return k;
    }

    private static PrimExpr literal(DType dt, double v) {
        return dt.isFloat() ? new FloatImm(v, dt) : new IntImm((long) v, dt);
    }

    private GroupValue call(String op, Call c, Map<Expr, GroupValue> values, Type outType) {
        List<Tensor> in = new ArrayList<>();
        for (Expr a : c.args()) in.addAll(values.get(a).flatten());
        // The templates (conv2d, dense) accumulate in the output dtype: for float16/bfloat16 that would round
        // every partial sum, so those ops take OpComputes' rule instead, which accumulates in float32 and rounds once.
        boolean half = in.stream().anyMatch(x -> dev.relayfarm.ir.HalfFloats.isNarrow(x.dtype()));
        Optional<ScheduleTemplate> t = templates.isEmpty() && !half ? Anchors.template(op, in, c.attrs(), names.fresh(op.replace("nn.", "").replace("contrib_", "")), config, registers) : Optional.empty();
        List<Compute> computes;
        if (t.isPresent()) {
            templates.add(t.get());
            for (Compute s : t.get().stages()) names.keep(s);
            computes = List.of(t.get().anchor());
        } else {
            try {
                computes = OpComputes.compute(op, in, c.attrs(), outType);
            } catch (UnsupportedOperationException e) {
                throw unsupported("operator " + op + " has no compute definition (" + e.getMessage() + ")");
            }
            List<Compute> renamed = new ArrayList<>();
            for (Compute x : computes) renamed.add((Compute) names.rename(x));
            computes = renamed;
            for (Compute x : computes) collectReductions(x);
        }
        if (outType instanceof TupleType) return new GroupValue.Tuple(computes.stream().map(x -> (GroupValue) new GroupValue.One(x)).toList());
        if (computes.size() != 1) throw new IllegalStateException("operator " + op + " made " + computes.size() + " computes for a tensor result");
        return new GroupValue.One(computes.getFirst());
    }

    private void collectReductions(Compute out) {
        ArrayDeque<Tensor> todo = new ArrayDeque<>(List.of(out));
        Set<Long> seen = new HashSet<>();
        List<Compute> found = new ArrayList<>();
        while (!todo.isEmpty()) {
            if (todo.pop() instanceof Compute c && seen.add(c.id())) {
                if (c.isReduction() && reductions.stream().noneMatch(r -> r.id() == c.id())) found.add(c);
                todo.addAll(c.inputs());
            }
        }
        reductions.addAll(found.reversed());
    }

    /** Outputs must be distinct computes: a parameter or a repeated tensor in the result gets a copy. */
    private List<Compute> outputs(List<Tensor> result) {
        List<Compute> out = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        for (Tensor t : result) {
            if (t instanceof Compute c && seen.add(c.id())) {
                out.add(c);
                continue;
            }
            Compute copy = Te.compute(names.fresh("copy"), t.shape(), ix -> t.at(ix));
            names.keep(copy);
            out.add(copy);
        }
        return out;
    }

    // ---- scheduling ----------------------------------------------------------------------------

    /** The template that schedules the group: the templated op, else the last reduction, else the first output's injective one. */
    private ScheduleTemplate anchor(List<Compute> outputs) {
        if (!templates.isEmpty()) return templates.getFirst();
        if (!reductions.isEmpty()) return new ReductionTemplate(reductions.getLast(), workload("reduction", reductions.getLast()));
        return new InjectiveTemplate(outputs.getFirst(), workload("injective", outputs.getFirst()));
    }

    private LoweredKernel schedule(List<Compute> outputs, ScheduleTemplate anchor, ScheduleConfig cfg) {
        KernelDef def = new KernelDef(name, inputs, outputs);
        List<Compute> all = allComputes(outputs);
        anchor.validate(cfg);
        Set<Long> own = new HashSet<>();
        for (Compute s : anchor.stages()) own.add(s.id());
        Compute a = anchor.anchor();
        boolean anchorIsOutput = outputs.stream().anyMatch(o -> o.id() == a.id());
        if (outputs.size() == 1 && !anchorIsOutput && !(anchor instanceof InjectiveTemplate) && outputs.getFirst().shape().equals(a.shape())
                && !outputs.getFirst().isReduction() && !readByAnotherReduction(a, all, own)) {
            try {
                LoweredFunc f = Lowering.lower(def, assemble(all, outputs, own, anchor, cfg, outputs.getFirst()));
                return kernel(f, anchor, cfg);
            } catch (ScheduleException | IllegalArgumentException e) {
                if (e instanceof InvalidConfigException) throw e;
                // the output is not an element-wise image of the anchor: materialize the anchor instead
            }
        }
        return kernel(Lowering.lower(def, assemble(all, outputs, own, anchor, cfg, a)), anchor, cfg);
    }

    /** The schedule: inlines, other reductions at the root, the anchor template tiling {@code tiled}, other outputs injective. */
    private Schedule assemble(List<Compute> all, List<Compute> outputs, Set<Long> own, ScheduleTemplate anchor, ScheduleConfig cfg, Compute tiled) {
        Set<Long> outIds = new HashSet<>();
        for (Compute o : outputs) outIds.add(o.id());
        List<Primitive> ps = new ArrayList<>();
        for (Compute c : all) {
            if (own.contains(c.id()) || outIds.contains(c.id()) || c.isReduction()) continue;
            ps.add(new Primitive.ComputeInline(c.name()));
        }
        for (Compute c : all) {
            if (own.contains(c.id()) || c.id() == tiled.id()) continue;
            if (c.isReduction()) {
                ReductionTemplate r = new ReductionTemplate(c, c.name());
                ps.addAll(r.schedule(r.defaultConfig(), c).primitives());
            } else if (outIds.contains(c.id())) {
                InjectiveTemplate t = new InjectiveTemplate(c, c.name());
                ScheduleConfig outputConfig = t.defaultConfig();
                if (INNER_OUTPUTS.orElse(false) && c.axes().size() >= 2) outputConfig = outputConfig.with("form", "inner");
                ps.addAll(t.schedule(outputConfig, c).primitives());
            }
        }
        ps.addAll(anchor.schedule(cfg, tiled).primitives());
        return new Schedule(ps);
    }

    /**
     * Whether a reduction other than the anchor's own stages reads {@code a}, directly or through inlined stages: it is
     * computed at the root, before the output loop, so {@code a} may not move into that loop (a softmax over an axis of
     * one, whose maximum has the output's shape, read its maximum before computing it).
     */
    private static boolean readByAnotherReduction(Compute a, List<Compute> all, Set<Long> own) {
        for (Compute c : all) {
            if (!c.isReduction() || own.contains(c.id()) || c.id() == a.id()) continue;
            ArrayDeque<Tensor> todo = new ArrayDeque<>(c.inputs());
            Set<Long> seen = new HashSet<>();
            while (!todo.isEmpty()) {
                if (todo.pop() instanceof Compute x && seen.add(x.id())) {
                    if (x.id() == a.id()) return true;
                    todo.addAll(x.inputs());
                }
            }
        }
        return false;
    }

    private static List<Compute> allComputes(List<Compute> outputs) {
        List<Compute> out = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        ArrayDeque<Tensor> todo = new ArrayDeque<>(outputs);
        while (!todo.isEmpty()) {
            if (todo.pop() instanceof Compute c && seen.add(c.id())) {
                out.add(c);
                todo.addAll(c.inputs());
            }
        }
        return out;
    }

    private String workload(String kind, Compute c) {
        StringBuilder sb = new StringBuilder(kind).append('(');
        for (int i = 0; i < inputs.size(); i++) sb.append(i == 0 ? "" : ",").append(inputs.get(i).shape()).append(inputs.get(i).dtype());
        return sb.append("->").append(c.shape()).append(')').toString().replace(" ", "");
    }

    private LoweredKernel kernel(LoweredFunc f, ScheduleTemplate anchor, ScheduleConfig cfg) {
        List<TensorSpec> ps = new ArrayList<>();
        for (Buffer b : f.params()) ps.add(new TensorSpec(b.name(), b.shape(), b.dtype()));
        return new LoweredKernel(f, new KernelSignature(f.name(), ps, f.numInputs()), anchor.workload(), cfg);
    }
}
