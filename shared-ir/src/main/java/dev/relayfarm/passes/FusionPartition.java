package dev.relayfarm.passes;

import dev.relayfarm.ops.OpPattern;
import java.util.ArrayDeque;

/**
 * TVM's GraphPartitioner over a {@link FusionGraph}: every node starts as its own group; three
 * phases, each walking the nodes producers-first, try to merge a node's group into the group of
 * its immediate post-dominator. A merge takes every node on every path from the node to that
 * post-dominator, and happens only if all of them (by their group's pattern) satisfy the phase's
 * condition, so a diamond fuses only when all its sides are fusable, and a node with a consumer
 * outside the would-be group never fuses (its post-dominator is then further away or absent).
 *
 * <ol start="0">
 *   <li>An OUT_ELEMWISE_FUSABLE anchor (conv2d, dense, pooling) whose path to its post-dominator
 *       is element-wise absorbs the element-wise/broadcast ops up to it. Element-wise and broadcast
 *       ops fuse into injective, broadcast or reduction post-dominators (the path may hold
 *       injective ops; the sink may already be an anchor's group).</li>
 *   <li>The same again, and now injective ops and tuples fuse into a post-dominator reached over
 *       injective paths (deferred to here so anchors claim their element-wise consumers first).
 *       An element-wise or injective group that is the data argument of a convolution copying that
 *       argument into a padded buffer ({@link FusionGraph#copiedData}) fuses into it.</li>
 *   <li>Injective ops fuse into a tuple that is itself already fused into an injective consumer
 *       (concatenate of transposes), unless that consumer's group is rooted at a tuple.</li>
 * </ol>
 *
 * Nothing fuses into a tuple in phases 0 and 1, opaque groups never move, and a merge that would
 * make a group larger than {@code maxDepth} nodes is refused. The union-find root of a group is its
 * most downstream node: the group's only value used outside it.
 */
final class FusionPartition {
    private final FusionGraph graph;
    private final int maxDepth;
    /** Union-find over node indices: each node's own group record, as in TVM. */
    private final int[] parent;
    private final OpPattern[] pattern;
    private final int[] numNodes;
    private final boolean[] anchored;
    /** Visit stamps for the path walks, so no walk clears a set. */
    private final int[] seen;
    private final int[] counted;
    private int stamp;

    private FusionPartition(FusionGraph graph, int maxDepth) {
        int n = graph.size();
        this.graph = graph;
        this.maxDepth = maxDepth;
        parent = new int[n];
        pattern = new OpPattern[n];
        numNodes = new int[n];
        anchored = new boolean[n];
        seen = new int[n];
        counted = new int[n];
        for (int i = 0; i < n; i++) {
            parent[i] = i;
            pattern[i] = graph.pattern[i];
            numNodes[i] = 1;
            anchored[i] = pattern[i] == OpPattern.OUT_ELEMWISE_FUSABLE;
        }
    }

    /** The group root of every node after the three phases. */
    static int[] partition(FusionGraph graph, int maxDepth) {
        FusionPartition p = new FusionPartition(graph, maxDepth);
        for (int phase = 0; phase < 3; phase++) p.runPhase(phase);
        int[] roots = new int[graph.size()];
        for (int i = 0; i < roots.length; i++) roots[i] = p.find(i);
        return roots;
    }

    int find(int i) {
        int r = i;
        while (parent[r] != r) r = parent[r];
        while (parent[i] != r) {
            int next = parent[i];
            parent[i] = r;
            i = next;
        }
        return r;
    }

    private void runPhase(int phase) {
        for (int nid = 0; nid < graph.size(); nid++) {
            OpPattern own = pattern[nid];
            if (own == OpPattern.OPAQUE) continue;
            int dom = graph.domParent[nid];
            if (dom < 0) continue;
            if (countWithNewChild(nid, dom) > maxDepth) continue;
            OpPattern domEdge = graph.domPattern[nid];
            if (phase == 2) {
                if (own.compareTo(OpPattern.INJECTIVE) > 0) continue;
                OpPattern domRoot = pattern[find(dom)];
                // A tuple-rooted group does not take its fields (TVM: inception-style concat of tuples).
                if (domRoot == OpPattern.TUPLE) continue;
                if (pattern[dom] == OpPattern.TUPLE && domRoot.compareTo(OpPattern.INJECTIVE) <= 0
                        && checkPath(nid, dom, (k, sink) -> k.compareTo(OpPattern.INJECTIVE) <= 0)) {
                    commitFuse(nid, dom);
                }
                continue;
            }
            if (find(nid) == find(dom)) continue;
            // Nothing fuses into a tuple before phase 2.
            if (pattern[dom] == OpPattern.TUPLE) continue;
            if (own == OpPattern.OUT_ELEMWISE_FUSABLE) {
                if (phase == 0 && domEdge == OpPattern.ELEMWISE
                        && checkPath(nid, dom, (k, sink) -> k.compareTo(OpPattern.BROADCAST) <= 0)) {
                    commitFuse(nid, dom);
                }
            } else if (own.compareTo(OpPattern.BROADCAST) <= 0) {
                if ((domEdge.compareTo(OpPattern.INJECTIVE) <= 0 || domEdge == OpPattern.COMM_REDUCE)
                        && checkPath(nid, dom, (k, sink) -> sink
                                ? k.compareTo(OpPattern.INJECTIVE) <= 0 || k == OpPattern.COMM_REDUCE || k == OpPattern.OUT_ELEMWISE_FUSABLE
                                : k.compareTo(OpPattern.INJECTIVE) <= 0)) {
                    commitFuse(nid, dom);
                }
            } else if (own == OpPattern.INJECTIVE || own == OpPattern.TUPLE) {
                if (phase == 1 && checkPath(nid, dom, (k, sink) -> k.compareTo(OpPattern.INJECTIVE) <= 0)) {
                    commitFuse(nid, dom);
                }
            }
            // An injective group whose only consumer is a convolution copying it into a padded buffer is computed in that
            // copy (after the element-wise and injective groups have formed: the whole chain goes in)
            if (phase == 1 && graph.copiedData[dom] == nid && find(nid) != find(dom) && own != OpPattern.TUPLE
                    && pattern[find(nid)].compareTo(OpPattern.INJECTIVE) <= 0 && checkPath(nid, dom, (k, sink) -> sink)) {
                commitFuse(nid, dom);
            }
            // COMM_REDUCE groups only take element-wise producers; they never move themselves.
        }
    }

    private interface Cond {
        boolean test(OpPattern groupPattern, boolean isSink);
    }

    /** Every node on every path from {@code src} (exclusive) to {@code sink} (inclusive) satisfies {@code cond}. */
    private boolean checkPath(int src, int sink, Cond cond) {
        int s = ++stamp;
        ArrayDeque<Integer> work = new ArrayDeque<>();
        for (FusionGraph.Edge e : graph.outputs.get(src)) work.push(e.node());
        while (!work.isEmpty()) {
            int v = work.pop();
            if (seen[v] == s) continue;
            seen[v] = s;
            if (!cond.test(pattern[find(v)], v == sink)) return false;
            if (v == sink) continue;
            for (FusionGraph.Edge e : graph.outputs.get(v)) work.push(e.node());
        }
        return true;
    }

    /** Merges the groups of all nodes on the paths from {@code src} to {@code sink} into the sink's group. */
    private void commitFuse(int src, int sink) {
        int target = sink;
        int s = ++stamp;
        ArrayDeque<Integer> work = new ArrayDeque<>();
        work.push(src);
        while (!work.isEmpty()) {
            int v = work.pop();
            if (seen[v] == s) continue;
            seen[v] = s;
            mergeInto(v, target);
            if (v == sink) continue;
            for (FusionGraph.Edge e : graph.outputs.get(v)) work.push(e.node());
        }
    }

    private void mergeInto(int child, int target) {
        int c = find(child);
        int p = find(target);
        if (c == p) return;
        numNodes[p] += numNodes[c];
        parent[c] = p;
        if (anchored[c]) {
            anchored[p] = true;
            if (pattern[c].compareTo(pattern[p]) > 0) pattern[p] = pattern[c];
        }
    }

    /** Size of the sink's group after taking in every group on the paths from {@code child}. */
    private int countWithNewChild(int child, int sink) {
        int targetRoot = find(sink);
        int total = numNodes[targetRoot];
        int s = ++stamp;
        ArrayDeque<Integer> work = new ArrayDeque<>();
        work.push(child);
        while (!work.isEmpty()) {
            int v = work.pop();
            if (v == sink || seen[v] == s) continue;
            seen[v] = s;
            int r = find(v);
            if (r != targetRoot && counted[r] != s) {
                counted[r] = s;
                total += numNodes[r];
            }
            for (FusionGraph.Edge e : graph.outputs.get(v)) work.push(e.node());
        }
        return total;
    }
}
