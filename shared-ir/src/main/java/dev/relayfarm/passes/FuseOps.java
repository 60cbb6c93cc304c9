package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * Operator fusion (the Relay paper's FuseOps; TVM's {@code relay.transform.FuseOps}): groups the
 * operator calls of each function into {@code Primitive} functions, the unit a code generator turns
 * into one kernel. Each group becomes {@code fn (%p0: T0, ..., Primitive=1) { ... }} called at the
 * place of the group's result, with the group's inputs as arguments; everything else keeps its
 * shape, so callers see the same values.
 *
 * <pre>
 * def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
 *   nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))
 * }
 *   ==>
 * def @main(%x: ..., %w: ..., %b: ...) {
 *   %0 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(4), float32], Primitive=1) {
 *     nn.relu(nn.bias_add(nn.conv2d(%p0, %p1, padding=[1, 1]), %p2))
 *   };
 *   %0(%x, %w, %b)
 * }
 * </pre>
 *
 * <p>How groups are chosen ({@link FusionGraph}, {@link FusionPartition}): the function body is a
 * dataflow DAG; each node's immediate post-dominator is computed, and each node tries to join the
 * group of its post-dominator when every path between them is fusable, by the ops' {@link
 * dev.relayfarm.ops.OpPattern}: conv2d/dense/pooling (OUT_ELEMWISE_FUSABLE) absorb element-wise and
 * broadcast consumers (phase 0); element-wise, broadcast and injective chains fuse into each other
 * and into reductions (phase 1); injective producers fuse into a tuple feeding an injective consumer
 * such as {@code concatenate} (phase 2). A value with consumers outside the would-be group (e.g.
 * used by two ops that cannot both join) ends its group. Opaque ops (softmax, batch_norm, topk,
 * unknown ops) are groups of one. A group never has more than {@link Options#maxDepth} nodes (TVM's
 * {@code max_fuse_depth}); a longer chain is cut into several groups.
 *
 * <p>Boundaries: a let-bound value, an {@code if} (condition and each branch), a {@code match}, a
 * nested function body, references and calls of functions are never looked through; each branch,
 * clause and nested function body is fused on its own. Functions already marked {@code Primitive}
 * are left alone, so running the pass twice changes nothing the second time.
 *
 * <p>Group inputs: every value from outside the group becomes a fresh parameter annotated with its
 * checked type (one per distinct value). Constants follow TVM: a scalar constant (rank 0) is
 * element-wise and stays inside the group that uses it; a tensor constant is passed in as a
 * parameter (the code generator binds weights as inputs rather than baking them into a kernel). A
 * group without any operator call (a lone tuple, a projection of an opaque op's tuple) is not
 * wrapped.
 *
 * <p>Not done: TVM's dynamic-shape rule (a data-dependent op with a dynamic result is opaque) and
 * its fusion of reductions into a following injective op are not modelled; let-bound dataflow is not
 * fused across the binding (convert to graph form first).
 */
public final class FuseOps extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("fuse-ops", 1,
            "groups operator calls into Primitive functions (conv2d+bias+relu, element-wise chains, ...)");

    /** @param maxDepth the most nodes one fused group may hold (TVM's max_fuse_depth) */
    public record Options(int maxDepth) {
        public static final Options DEFAULT = new Options(256);

        public Options {
            if (maxDepth < 1) throw new IllegalArgumentException("maxDepth must be at least 1, got " + maxDepth);
        }
    }

    private final Options options;

    public FuseOps() {
        this(Options.DEFAULT);
    }

    public FuseOps(Options options) {
        super(INFO);
        this.options = options;
    }

    public Options options() {
        return options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        InferResult types = context.types();
        FusionGraph graph = FusionGraph.build(function.body(), types);
        int[] root = FusionPartition.partition(graph, options.maxDepth());
        int n = graph.size();
        // Only groups holding an operator call become Primitive functions.
        boolean[] wrap = new boolean[n];
        boolean any = false;
        for (int i = 0; i < n; i++) {
            if (graph.nodes.get(i) instanceof Call c && c.callee() instanceof Op) {
                wrap[root[i]] = true;
                any = true;
            }
        }
        if (!any) return function;

        Expr[] outer = new Expr[n];
        Expr[] inner = new Expr[n];
        HashMap<Integer, GroupBuilder> groups = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Expr e = graph.nodes.get(i);
            int g = root[i];
            if (!wrap[g]) {
                outer[i] = e instanceof Function f && f.isPrimitive() ? f : ExprRewriter.withChildren(e, c -> outerOf(c, graph, outer));
                continue;
            }
            GroupBuilder b = groups.computeIfAbsent(g, k -> new GroupBuilder());
            inner[i] = ExprRewriter.withChildren(e, c -> {
                if (c instanceof Op) return c;
                int ci = graph.index.get(c);
                if (root[ci] == g) return inner[ci];
                return b.param(c, types, outerOf(c, graph, outer));
            });
            if (i == g) {
                Function fn = new Function(b.params, inner[i], null, List.of(),
                        Attrs.of(Function.PRIMITIVE, new AttrValue.IntValue(1)), e.span());
                outer[i] = new Call(fn, b.args, Attrs.EMPTY, List.of(), e.span());
                groups.remove(g);
            }
        }
        return function.withBody(outer[graph.index.get(function.body())]);
    }

    private static Expr outerOf(Expr c, FusionGraph graph, Expr[] outer) {
        int ci = graph.index.get(c);
        Expr r = outer[ci];
        // Only a group's root is visible outside it; anything else is a partitioning bug.
        if (r == null) throw new IllegalStateException("fuse-ops: " + c + " is used outside its fused group");
        return r;
    }

    /** The parameters of one group being built: one per distinct outside value, in first-use order. */
    private static final class GroupBuilder {
        final List<Var> params = new ArrayList<>();
        final List<Expr> args = new ArrayList<>();
        final IdentityHashMap<Expr, Var> byValue = new IdentityHashMap<>();

        Var param(Expr value, InferResult types, Expr outerValue) {
            Var p = byValue.get(value);
            if (p == null) {
                p = Var.fresh("p" + params.size(), types.typeOf(value));
                byValue.put(value, p);
                params.add(p);
                args.add(outerValue);
            }
            return p;
        }
    }
}
