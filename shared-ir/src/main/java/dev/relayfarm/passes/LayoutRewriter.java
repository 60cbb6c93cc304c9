package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.layout.Layout;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The layout rewriting both {@link ConvertLayout} and {@link AlterOpLayout} run (TVM's
 * {@code transform_layout.h}), one forward walk over a function's dataflow:
 * <ol>
 *   <li>An <em>anchor</em> (a call whose operator has a hook) gets its arguments in the layouts the
 *       hook wants and produces its result in a new layout.</li>
 *   <li>A value in a new layout flows on through layout-agnostic consumers: element-wise and broadcast
 *       operators (other operands are transformed to match; a lower-rank broadcast operand is expanded
 *       to full rank first, and a size-1 blocked axis is blocked by 1), {@code nn.bias_add} (its axis
 *       is moved, or it becomes an {@code add} of a transformed bias when the axis is blocked),
 *       {@code concatenate} (axis moved), pools (layout attribute set, when the new layout permutes
 *       the axes or splits only C, as {@code NCHW16c}), and {@code layout_transform} (composed with
 *       the pending transform).</li>
 *   <li>Every other consumer (reshape, dense, softmax, a tuple, a let binding, a function result...)
 *       reads the value in its original layout: the walk's result for a node is always in the original
 *       layout, and a node in a new layout maps to {@code layout_transform(new, current, original)}.</li>
 * </ol>
 * A transform to layout A of {@code layout_transform(x, A, B)} is {@code x}: so the transform back
 * after one anchor and the transform into the next cancel, and values stay in the new layout from one
 * anchor to the next. Only the types of the original program are consulted; the hooks decide from
 * those. Iterative and memoized through {@link ExprRewriter}: shared values are transformed once.
 */
final class LayoutRewriter extends ExprRewriter {
    /** Element-wise or broadcast operators whose attributes still name axes or shapes of the original layout. */
    private static final Set<String> NOT_AGNOSTIC = Set.of("nn.prelu", "broadcast_to", "full", "zeros", "ones");
    private static final Set<String> POOLS = Set.of("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d");

    private final Map<String, AlterLayoutHook> hooks;
    private final Map<Expr, Type> types;
    private final IdentityHashMap<Expr, LayoutValue> laid = new IdentityHashMap<>();
    private final IdentityHashMap<Expr, Map<String, Expr>> made = new IdentityHashMap<>();

    LayoutRewriter(Map<String, AlterLayoutHook> hooks, InferResult types) {
        this.hooks = hooks;
        this.types = types.types();
    }

    @Override
    protected Expr rewrite(Expr pre, Expr post) {
        if (!(pre instanceof Call call) || !(call.callee() instanceof Op op)) return post;
        LayoutValue v = rewriteCall(call, op.name(), (Call) post);
        if (v == null) return post;
        if (v.current().equals(v.original())) return v.expr();
        laid.put(pre, v);
        return transform(v.expr(), v.current(), v.original());
    }

    private LayoutValue rewriteCall(Call call, String name, Call post) {
        AlterLayoutHook hook = hooks.get(name);
        if (hook != null) {
            List<Type> argTypes = new ArrayList<>();
            for (Expr a : call.args()) {
                Type t = types.get(a);
                if (t == null) return null;
                argTypes.add(t);
            }
            Type out = types.get(call);
            if (out == null) return null;
            Optional<LayoutChange> change = hook.alter(call, argTypes, out);
            if (change.isPresent()) return anchor(call, post, change.get());
        }
        if (name.equals("concatenate")) return concatenate(call, post);
        if (call.args().stream().noneMatch(laid::containsKey)) return null;
        if (name.equals("layout_transform")) return composedTransform(call, post);
        if (name.equals("nn.bias_add")) return biasAdd(call, post);
        if (POOLS.contains(name)) return pool(call, post);
        OpDef<?> def = OpRegistry.find(name).orElse(null);
        if (def != null && (def.pattern() == OpPattern.ELEMWISE || def.pattern() == OpPattern.BROADCAST) && !NOT_AGNOSTIC.contains(name)) {
            return elementwise(call, post);
        }
        return null;
    }

    private LayoutValue anchor(Call call, Call post, LayoutChange ch) {
        if (ch.inputsOriginal().size() != call.args().size()) {
            throw new IllegalStateException("layout hook for " + call.callee() + " gave " + ch.inputsOriginal().size()
                    + " input layouts for " + call.args().size() + " arguments");
        }
        List<Expr> args = new ArrayList<>();
        for (int i = 0; i < call.args().size(); i++) {
            args.add(convert(call.args().get(i), post.args().get(i), ch.inputsOriginal().get(i), ch.inputsWanted().get(i)));
        }
        return new LayoutValue(ch.build().apply(args), ch.outputNew(), ch.outputOriginal());
    }

    /** {@code layout_transform(x, A, B)} of a value held in layout C: one transform C -> B (none when C is B). */
    private LayoutValue composedTransform(Call call, Call post) {
        LayoutValue v = laid.get(call.args().getFirst());
        Layout src = parse(call.attrs(), "src_layout"), dst = parse(call.attrs(), "dst_layout");
        if (src == null || dst == null) return null;
        return new LayoutValue(convert(v, src, dst), dst, dst);
    }

    /** Element-wise: follows the first argument in a new layout whose shape is the result's shape. */
    private LayoutValue elementwise(Call call, Call post) {
        if (!(types.get(call) instanceof TensorType out)) return null;
        LayoutValue lead = null;
        for (Expr a : call.args()) {
            LayoutValue v = laid.get(a);
            if (v != null && types.get(a) instanceof TensorType t && t.shape().equals(out.shape()) && v.original().rank() == out.rank()
                    && !v.original().isBlocked()) {
                lead = v;
                break;
            }
        }
        if (lead == null) return null;
        List<Expr> args = new ArrayList<>();
        for (int i = 0; i < call.args().size(); i++) {
            Expr a = call.args().get(i);
            if (!(types.get(a) instanceof TensorType t)) return null;
            Expr e = operand(a, post.args().get(i), t.shape(), lead.original(), lead.current());
            if (e == null) return null;
            args.add(e);
        }
        return new LayoutValue(new Call(call.callee(), args, call.attrs(), List.of(), call.span()), lead.current(), lead.original());
    }

    /**
     * A broadcast operand of shape {@code shape} (in the original layout {@code orig}, aligned to the
     * trailing axes) made to broadcast against a value in layout {@code cur}; null when it cannot.
     */
    private Expr operand(Expr pre, Expr post, List<Dim> shape, Layout orig, Layout cur) {
        int rank = orig.rank();
        if (shape.size() > rank) return null;
        if (shape.stream().allMatch(d -> d.isStatic() && d.value() == 1)) return post; // broadcasts in any layout
        List<Dim> full = new ArrayList<>();
        for (int i = shape.size(); i < rank; i++) full.add(Dim.of(1));
        full.addAll(shape);
        Layout want = cur;
        for (Layout.Axis ax : cur.axes()) {
            if (ax.isPrimal()) continue;
            Dim d = full.get(orig.indexOf(ax.primal()));
            if (!d.isStatic()) return null;
            if (d.value() == 1) want = want.withFactor(ax.primal(), 1);
            else if (d.value() % ax.factor() != 0) return null;
        }
        if (shape.size() == rank) return convert(pre, post, orig, want);
        Expr expanded = new Call(Op.get("expand_dims"), List.of(post),
                Attrs.of("axis", AttrValue.of(0L)).with("num_newaxis", AttrValue.of((long) (rank - shape.size()))));
        return transform(expanded, orig, want);
    }

    /** {@code nn.bias_add(x, b, axis)}: the axis moves with x's layout; a blocked axis makes it an add of a transformed bias. */
    private LayoutValue biasAdd(Call call, Call post) {
        LayoutValue v = laid.get(call.args().get(0));
        if (v == null || v.original().isBlocked() || !(types.get(call.args().get(1)) instanceof TensorType b) || b.rank() != 1) return null;
        int rank = v.original().rank();
        int axis = (int) intAttr(call.attrs(), "axis", 1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) return null;
        char primal = v.original().axes().get(axis).primal();
        Expr bias = post.args().get(1);
        if (v.current().factorOf(primal) == 0) {
            Attrs attrs = call.attrs().with("axis", AttrValue.of((long) v.current().indexOf(primal)));
            return new LayoutValue(new Call(call.callee(), List.of(v.expr(), bias), attrs, List.of(), call.span()), v.current(), v.original());
        }
        // The bias as the broadcast operand bias_add means: shape (C, 1, ..., 1) aligned to the trailing axes.
        List<Dim> shape = new ArrayList<>();
        shape.add(b.shape().getFirst());
        for (int i = axis + 1; i < rank; i++) shape.add(Dim.of(1));
        Expr column = rank - 1 - axis == 0 ? bias : new Call(Op.get("expand_dims"), List.of(bias),
                Attrs.of("axis", AttrValue.of(1L)).with("num_newaxis", AttrValue.of((long) (rank - 1 - axis))));
        Expr operand = operand(column, column, shape, v.original(), v.current());
        if (operand == null) return null;
        return new LayoutValue(new Call(Op.get("add"), List.of(v.expr(), operand), Attrs.EMPTY, List.of(), call.span()), v.current(), v.original());
    }

    /** {@code concatenate((a, b, ...), axis)} of values that can all be put in the layout of the first one in a new layout. */
    private LayoutValue concatenate(Call call, Call post) {
        if (!(call.args().getFirst() instanceof Tuple tuple) || !(post.args().getFirst() instanceof Tuple postTuple)) return null;
        LayoutValue lead = null;
        for (Expr f : tuple.fields()) {
            LayoutValue v = laid.get(f);
            if (v != null && !v.original().isBlocked()) {
                lead = v;
                break;
            }
        }
        if (lead == null) return null;
        Layout orig = lead.original(), cur = lead.current();
        List<Expr> fields = new ArrayList<>();
        for (int i = 0; i < tuple.fields().size(); i++) {
            Expr f = tuple.fields().get(i);
            if (!(types.get(f) instanceof TensorType t) || t.rank() != orig.rank()) return null;
            for (Layout.Axis ax : cur.axes()) {
                if (ax.isPrimal()) continue;
                Dim d = t.shape().get(orig.indexOf(ax.primal()));
                if (!d.isStatic() || d.value() % ax.factor() != 0) return null;
            }
            fields.add(convert(f, postTuple.fields().get(i), orig, cur));
        }
        int axis = (int) intAttr(call.attrs(), "axis", 0);
        if (axis < 0) axis += orig.rank();
        if (axis < 0 || axis >= orig.rank()) return null;
        Attrs attrs = call.attrs().with("axis", AttrValue.of((long) cur.indexOf(orig.axes().get(axis).primal())));
        Expr concat = new Call(call.callee(), List.of(new Tuple(fields, tuple.span())), attrs, List.of(), call.span());
        return new LayoutValue(concat, cur, orig);
    }

    /**
     * Pools compute per channel plane: any permutation of their layout works, and so does one with the
     * channels in blocks (the pool ops accept {@code NCHW16c}), so they take the input's layout. A
     * split of N, H or W (which would cut pooling windows) sends the value back to its original layout.
     */
    private LayoutValue pool(Call call, Call post) {
        LayoutValue v = laid.get(call.args().getFirst());
        Layout layout = layoutAttr(call.attrs(), "layout", "NCHW");
        Layout outLayout = layoutAttr(call.attrs(), "out_layout", layout == null ? "NCHW" : layout.name());
        if (layout == null || outLayout == null || !v.original().equals(layout) || !outLayout.equals(layout)) return null;
        Layout cur = v.current();
        if (cur.factorOf('N') != 0 || cur.factorOf('H') != 0 || cur.factorOf('W') != 0) return null;
        Attrs attrs = call.attrs().with("layout", AttrValue.of(v.current().name())).without("out_layout");
        return new LayoutValue(new Call(call.callee(), List.of(v.expr()), attrs, List.of(), call.span()), v.current(), v.original());
    }

    /** Argument {@code pre} (rewritten: {@code post}), read by its consumer in layout {@code orig}, put in layout {@code want}. */
    private Expr convert(Expr pre, Expr post, Layout orig, Layout want) {
        LayoutValue v = laid.get(pre);
        return v == null ? transform(post, orig, want) : convert(v, orig, want);
    }

    private Expr convert(LayoutValue v, Layout orig, Layout want) {
        if (v.original().equals(orig)) return transform(v.expr(), v.current(), want);
        // The consumer reads the value under another name for its axes: back to the original first.
        return transform(transform(v.expr(), v.current(), v.original()), orig, want);
    }

    /**
     * {@code layout_transform(e, from, to)}, cancelling against a transform {@code to -> from} that
     * made {@code e}; one node per value and layout pair, so a value read by several consumers in the
     * same new layout is transformed once.
     */
    private Expr transform(Expr e, Layout from, Layout to) {
        if (from.equals(to)) return e;
        return made.computeIfAbsent(e, k -> new HashMap<>()).computeIfAbsent(from.name() + "->" + to.name(), k -> newTransform(e, from, to));
    }

    private Expr newTransform(Expr e, Layout from, Layout to) {
        if (e instanceof Call c && c.callee() instanceof Op op && op.name().equals("layout_transform")
                && to.equals(parse(c.attrs(), "src_layout")) && from.equals(parse(c.attrs(), "dst_layout"))) {
            return c.args().getFirst();
        }
        if (!from.canTransformTo(to)) return transform(transform(e, from, from.primal()), from.primal(), to);
        return new Call(Op.get("layout_transform"), List.of(e),
                Attrs.of("src_layout", AttrValue.of(from.name())).with("dst_layout", AttrValue.of(to.name())));
    }

    static Layout parse(Attrs attrs, String key) {
        if (!(attrs.get(key).orElse(null) instanceof AttrValue.StringValue(String s))) return null;
        try {
            return Layout.parse(s);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The layout attribute {@code key}, {@code dflt} when absent or empty (TVM's "same as the input"), null when malformed. */
    static Layout layoutAttr(Attrs attrs, String key, String dflt) {
        AttrValue v = attrs.get(key).orElse(null);
        if (v == null || v instanceof AttrValue.StringValue(String s) && s.isEmpty()) return Layout.parse(dflt);
        return parse(attrs, key);
    }

    static long intAttr(Attrs attrs, String key, long dflt) {
        return attrs.get(key).orElse(null) instanceof AttrValue.IntValue(long v) ? v : dflt;
    }
}
