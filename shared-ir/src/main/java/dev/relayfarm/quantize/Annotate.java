package dev.relayfarm.quantize;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.passes.FunctionPass;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassInfo;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Quantize step 1 (TVM's {@code QuantizeAnnotate}): puts an {@code annotation.simulated_quantize} point on the data
 * and the weight of every quantizable conv2d / dense ({@link QuantizeRules#ANCHORS}) not on the skip lists, with a
 * zero (uncalibrated) scale. The data's point moves up over single-use {@link QuantizeRules#TRANSPARENT} operators
 * to where the producer's value leaves it, so the integer program requantizes once there and pools / reshapes
 * 8-bit values; when it moved over a relu it is unsigned ({@code sign=False}, [0, 255]: the relu drops negatives
 * anyway, and the levels double). The weight's point is per output channel ({@code axis=0}) unless the config asks
 * for per-tensor scales.
 *
 * <pre>
 * %1 = nn.relu(nn.bias_add(nn.conv2d(%x, W0), B));          // conv 0: skipped by default
 * %2 = nn.max_pool2d(%1, pool_size=[2, 2]);
 * nn.conv2d(%2, W1)
 *   ==>
 * %0 = annotation.simulated_quantize(nn.bias_add(nn.conv2d(%x, W0), B), 0f, kind="activation", sign=False);
 * %2 = nn.max_pool2d(nn.relu(%0), pool_size=[2, 2]);
 * nn.conv2d(%2, annotation.simulated_quantize(W1, 0f, kind="weight", axis=0))
 * </pre>
 *
 * The anchors are numbered per function in post-order (the order of a straight-line model). Not done: quantizing
 * add / concatenate / pooling as anchors of their own, mixed bit widths per layer, anchors whose weight is not a
 * constant (run fold-constant first) or whose layouts are not NCHW / OIHW; bodies of Primitive functions.
 */
public final class Annotate extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("quantize-annotate", 0,
            "inserts simulated-quantize points at the data and weights of conv2d / dense");

    private final QuantizeConfig config;
    /** The point an edge gets: its kind, whether it is unsigned (a relu lies between it and the anchor), a weight's channel axis. */
    private record Mark(String kind, boolean unsigned, int axis) {}

    public Annotate(QuantizeConfig config) {
        super(INFO);
        this.config = config;
    }

    /**
     * A point's call, as the other quantize passes read it; {@code sign=False}: the unsigned range [0, 2^nbit - 1], for a
     * value a relu makes non-negative anyway.
     */
    public static Call point(Expr data, String kind, int nbit, int axis, boolean sign) {
        Attrs attrs = Attrs.of("kind", AttrValue.of(kind));
        if (nbit != 8) attrs = attrs.with("nbit", AttrValue.of((long) nbit));
        if (!sign) attrs = attrs.with("sign", AttrValue.of(false));
        if (axis >= 0) attrs = attrs.with("axis", AttrValue.of((long) axis));
        return new Call(Op.get(SimulatedQuantize.NAME), List.of(data, new Constant(NDArray.scalar(0f))), attrs);
    }

    public static boolean isPoint(Expr e) {
        return e instanceof Call c && c.callee() instanceof Op op && op.name().equals(SimulatedQuantize.NAME);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        InferResult types = context.types();
        List<Expr> order = ExprTraversal.postOrder(function.body(), e -> e instanceof Function f && f.isPrimitive() ? List.of() : e.children());
        Map<Expr, Integer> uses = new IdentityHashMap<>();
        List<Call> convs = new ArrayList<>(), denses = new ArrayList<>();
        for (Expr e : order) {
            for (Expr child : e instanceof Function f && f.isPrimitive() ? List.<Expr>of() : e.children()) uses.merge(child, 1, Integer::sum);
            if (e instanceof Call c && c.callee() instanceof Op op && QuantizeRules.ANCHORS.containsKey(op.name())) {
                (op.name().equals(Conv2D.NAME) ? convs : denses).add(c);
            }
        }
        // (consumer, argument index) -> the kind of point to put on that edge
        Map<Call, Map<Integer, Mark>> edges = new IdentityHashMap<>();
        mark(convs, config.skipConvLayers(), uses, types, edges);
        mark(denses, config.skipDenseLayers(), uses, types, edges);
        if (edges.isEmpty()) return function;
        return function.withBody(new Marker(edges, config).rewrite(function.body()));
    }

    private void mark(List<Call> anchors, java.util.Set<Integer> skip, Map<Expr, Integer> uses, InferResult types, Map<Call, Map<Integer, Mark>> edges) {
        for (int i = 0; i < anchors.size(); i++) {
            Call c = anchors.get(i);
            if (skip.contains(i) || skip.contains(i - anchors.size())) continue; // -1: the last one
            if (!QuantizeRules.quantizable(c, types::typeOf)) continue;
            QuantizeRules.Anchor anchor = QuantizeRules.ANCHORS.get(((Op) c.callee()).name());
            List<QuantizeRules.Role> roles = anchor.args();
            for (int arg = 0; arg < roles.size(); arg++) {
                if (roles.get(arg) == QuantizeRules.Role.WEIGHT) {
                    edges.computeIfAbsent(c, k -> new HashMap<>()).put(arg, new Mark("weight", false, config.perChannelWeights() ? anchor.weightChannelAxis() : -1));
                    continue;
                }
                // Up over single-use transparent operators: they then run on the quantized values.
                Call consumer = c;
                int index = arg;
                Expr data = c.args().get(arg);
                boolean relu = false;
                while (data instanceof Call d && d.callee() instanceof Op op && QuantizeRules.TRANSPARENT.contains(op.name())
                        && uses.getOrDefault(d, 0) == 1 && !d.args().isEmpty()) {
                    relu |= op.name().equals("nn.relu");
                    consumer = d;
                    index = 0;
                    data = d.args().get(0);
                }
                // A relu between the point and the anchor clips negatives anyway: the point may use the unsigned range
                // (twice the levels for the same threshold); the transparent ops keep values non-negative after it.
                edges.computeIfAbsent(consumer, k -> new HashMap<>()).put(index, new Mark(data instanceof Var ? "input" : "activation", relu, -1));
            }
        }
    }

    /** Wraps the marked edges; one point per (value, kind), so anchors sharing an input share its quantization. */
    private static final class Marker extends ExprRewriter {
        private final Map<Call, Map<Integer, Mark>> edges;
        private final QuantizeConfig config;
        private final Map<Expr, Map<Mark, Call>> points = new IdentityHashMap<>();

        Marker(Map<Call, Map<Integer, Mark>> edges, QuantizeConfig config) {
            this.edges = edges;
            this.config = config;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            if (pre instanceof Function f && f.isPrimitive()) return pre;
            if (!(pre instanceof Call c) || !edges.containsKey(c)) return post;
            Call p = (Call) post;
            List<Expr> args = new ArrayList<>(p.args());
            edges.get(c).forEach((i, mark) -> args.set(i, points.computeIfAbsent(args.get(i), k -> new HashMap<>()).computeIfAbsent(mark,
                    m -> point(args.get(i), m.kind(), m.kind().equals("weight") ? config.nbitWeight() : config.nbitActivation(), m.axis(), !m.unsigned()))));
            return new Call(p.callee(), args, p.attrs(), p.typeArgs(), p.span());
        }
    }
}
