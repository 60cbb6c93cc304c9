package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * The dataflow graph {@link FuseOps} partitions (TVM's IndexedForwardGraph) and its post-dominator
 * tree. Nodes are the distinct expressions of one function body in post-order (producers before
 * consumers), numbered {@code 0..size-1}; each node has a fusion pattern and its forward edges (to
 * its consumers, each with the pattern of that use). A node whose value escapes into a position the
 * fuser must not look through (a let value or body, an if condition or branch, a function body, a
 * match, a reference, the function result, a non-tensor tuple field, a use in another block) has no
 * edge for that use but is marked {@code extern}: it ends every group it is in.
 *
 * <p>{@link Blocks}: the branches of an {@code if}, the clauses of a {@code match} and the bodies of
 * nested functions are blocks of their own; an edge joins two nodes of the same block only, so groups never
 * move work into or out of a branch or a closure. Bodies of {@code Primitive} functions (already
 * fused) are not part of the graph.
 *
 * <p>Everything is built with explicit work lists: 100,000-node chains do not touch the Java stack.
 */
final class FusionGraph {
    /** A forward edge: {@code node} consumes the source with this {@code pattern}. */
    record Edge(int node, OpPattern pattern) {}

    final List<Expr> nodes;
    final IdentityHashMap<Expr, Integer> index;
    final OpPattern[] pattern;
    final boolean[] extern;
    final List<List<Edge>> outputs;
    /** Post-dominator tree: parent index or -1, depth (roots 1), combined pattern of the path to the parent. */
    final int[] domParent;
    final int[] domDepth;
    final OpPattern[] domPattern;
    /**
     * For a call whose kernel copies its data argument into a padded buffer ({@link PaddedDataCopy}): the node of that
     * argument, which may fuse into it when injective; -1 for every other node.
     */
    final int[] copiedData;

    private FusionGraph(List<Expr> nodes, IdentityHashMap<Expr, Integer> index) {
        int n = nodes.size();
        this.nodes = nodes;
        this.index = index;
        this.pattern = new OpPattern[n];
        this.extern = new boolean[n];
        this.outputs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) outputs.add(new ArrayList<>(1));
        this.domParent = new int[n];
        this.domDepth = new int[n];
        this.domPattern = new OpPattern[n];
        this.copiedData = new int[n];
        java.util.Arrays.fill(copiedData, -1);
    }

    int size() {
        return nodes.size();
    }

    /** The graph of {@code body} (the body of a function being fused), typed by {@code types}. */
    static FusionGraph build(Expr body, InferResult types) {
        List<Expr> order = ExprTraversal.postOrder(body, Blocks::children);
        IdentityHashMap<Expr, Integer> index = new IdentityHashMap<>(order.size() * 2);
        for (int i = 0; i < order.size(); i++) index.put(order.get(i), i);
        FusionGraph g = new FusionGraph(order, index);
        int[] block = new int[order.size()];
        IdentityHashMap<Expr, Integer> blocks = Blocks.of(body);
        for (int i = 0; i < order.size(); i++) block[i] = blocks.get(order.get(i));
        for (int i = 0; i < order.size(); i++) g.addNode(i, types, block);
        g.extern[index.get(body)] = true;
        g.postDominators();
        return g;
    }

    private void edge(int from, int to, OpPattern p, int[] block) {
        if (block[from] != block[to]) extern[from] = true;
        else outputs.get(from).add(new Edge(to, p));
    }

    private void addNode(int i, InferResult types, int[] block) {
        Expr e = nodes.get(i);
        pattern[i] = OpPattern.OPAQUE;
        switch (e) {
            case Call c when c.callee() instanceof Op op -> {
                OpPattern p = OpRegistry.find(op.name()).map(OpDef::pattern).orElse(OpPattern.OPAQUE);
                pattern[i] = p;
                extern[index.get(c.callee())] = true;
                Type out = types.typeOf(c);
                for (Expr a : c.args()) {
                    OpPattern edge = p;
                    // A broadcast op whose argument already has the result's shape is element-wise on it.
                    if (p == OpPattern.BROADCAST && types.typeOf(a) instanceof TensorType at && out instanceof TensorType ot
                            && at.shape().equals(ot.shape())) {
                        edge = OpPattern.ELEMWISE;
                    }
                    edge(index.get(a), i, edge, block);
                }
                if (PaddedDataCopy.copiesData(c, types)) copiedData[i] = index.get(c.args().getFirst());
            }
            case Call c -> {
                for (Expr a : c.children()) edge(index.get(a), i, OpPattern.OPAQUE, block);
            }
            case Tuple t -> {
                pattern[i] = OpPattern.TUPLE;
                for (Expr f : t.fields()) {
                    if (types.typeOf(f) instanceof TensorType) edge(index.get(f), i, OpPattern.INJECTIVE, block);
                    else extern[index.get(f)] = true;
                }
            }
            case TupleGetItem t -> {
                if (types.typeOf(t.tuple()) instanceof TupleType tt && tt.fields().stream().allMatch(f -> f instanceof TensorType)) {
                    pattern[i] = OpPattern.INJECTIVE;
                    edge(index.get(t.tuple()), i, OpPattern.INJECTIVE, block);
                } else {
                    extern[index.get(t.tuple())] = true;
                }
            }
            // Scalar constants fuse into their consumers; tensors are passed in (see FuseOps).
            case Constant k -> pattern[i] = k.data().shape().length == 0 ? OpPattern.ELEMWISE : OpPattern.OPAQUE;
            default -> {
                for (Expr c : Blocks.children(e)) extern[index.get(c)] = true;
            }
        }
    }

    private static OpPattern combine(OpPattern a, OpPattern b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /**
     * The post-dominator tree, consumers first (reverse post-order): a node's parent is the least
     * common ancestor of its consumers; extern nodes are roots. {@code domPattern} is the most
     * general pattern met on the way (the edges and the tree paths walked to the ancestor).
     */
    private void postDominators() {
        for (int i = size() - 1; i >= 0; i--) {
            List<Edge> outs = outputs.get(i);
            if (extern[i] || outs.isEmpty()) {
                domParent[i] = -1;
                domDepth[i] = 1;
                domPattern[i] = OpPattern.OPAQUE;
                continue;
            }
            OpPattern[] p = {combine(OpPattern.ELEMWISE, outs.get(0).pattern())};
            int parent = outs.get(0).node();
            for (int k = 1; k < outs.size() && parent >= 0; k++) {
                parent = lca(parent, outs.get(k).node(), p);
                p[0] = combine(p[0], outs.get(k).pattern());
            }
            domParent[i] = parent;
            domDepth[i] = parent < 0 ? 1 : domDepth[parent] + 1;
            domPattern[i] = p[0];
        }
    }

    private int lca(int a, int b, OpPattern[] p) {
        while (a != b) {
            if (a < 0 || b < 0) return -1;
            if (domDepth[a] < domDepth[b]) {
                p[0] = combine(p[0], domPattern[b]);
                b = domParent[b];
            } else if (domDepth[b] < domDepth[a]) {
                p[0] = combine(p[0], domPattern[a]);
                a = domParent[a];
            } else {
                p[0] = combine(combine(p[0], domPattern[a]), domPattern[b]);
                a = domParent[a];
                b = domParent[b];
            }
        }
        return a;
    }
}
