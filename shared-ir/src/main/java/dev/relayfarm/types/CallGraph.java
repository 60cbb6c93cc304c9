package dev.relayfarm.types;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which globals reference which, grouped into strongly connected components (mutually recursive
 * groups) in dependency order: a group comes after every group it references. Type inference checks
 * one group at a time, so a polymorphic global is generalized before its callers instantiate it.
 * Tarjan's algorithm with an explicit stack: a module may hold a long chain of globals.
 */
final class CallGraph {
    private CallGraph() {}

    /** The components, callees first; members of a component in module order. */
    static List<List<GlobalVar>> components(IRModule module) {
        List<GlobalVar> globals = new ArrayList<>(module.functions().keySet());
        Map<GlobalVar, Integer> index = new HashMap<>();
        for (int i = 0; i < globals.size(); i++) index.put(globals.get(i), i);
        int n = globals.size();
        // A global's Function node used as a value elsewhere (DAG sharing, e.g. from JSON) is that
        // global, so it is a reference too; when several globals share one node, the first defines it.
        IdentityHashMap<Function, Integer> definitions = new IdentityHashMap<>();
        for (int i = 0; i < n; i++) definitions.putIfAbsent(module.functions().get(globals.get(i)), i);
        int[][] adj = new int[n][];
        for (int i = 0; i < n; i++) adj[i] = references(module.functions().get(globals.get(i)), i, index, definitions);

        int[] order = new int[n];
        int[] low = new int[n];
        Arrays.fill(order, -1);
        boolean[] onStack = new boolean[n];
        ArrayDeque<Integer> stack = new ArrayDeque<>();
        List<List<GlobalVar>> out = new ArrayList<>();
        int counter = 0;
        for (int start = 0; start < n; start++) {
            if (order[start] != -1) continue;
            ArrayDeque<int[]> work = new ArrayDeque<>();
            order[start] = low[start] = counter++;
            stack.push(start);
            onStack[start] = true;
            work.push(new int[] {start, 0});
            while (!work.isEmpty()) {
                int[] top = work.peek();
                int u = top[0];
                if (top[1] < adj[u].length) {
                    int w = adj[u][top[1]++];
                    if (order[w] == -1) {
                        order[w] = low[w] = counter++;
                        stack.push(w);
                        onStack[w] = true;
                        work.push(new int[] {w, 0});
                    } else if (onStack[w]) {
                        low[u] = Math.min(low[u], order[w]);
                    }
                } else {
                    work.pop();
                    if (!work.isEmpty()) {
                        int p = work.peek()[0];
                        low[p] = Math.min(low[p], low[u]);
                    }
                    if (low[u] == order[u]) {
                        List<Integer> members = new ArrayList<>();
                        int w;
                        do {
                            w = stack.pop();
                            onStack[w] = false;
                            members.add(w);
                        } while (w != u);
                        members.sort(Integer::compare);
                        out.add(members.stream().map(globals::get).toList());
                    }
                }
            }
        }
        return out;
    }

    private static int[] references(Function f, int self, Map<GlobalVar, Integer> index, Map<Function, Integer> definitions) {
        Set<Integer> refs = new LinkedHashSet<>();
        for (Expr e : ExprTraversal.postOrder(f)) {
            if (e instanceof GlobalVar g && index.containsKey(g)) refs.add(index.get(g));
            if (e instanceof Function d && definitions.containsKey(d) && definitions.get(d) != self) refs.add(definitions.get(d));
        }
        return refs.stream().mapToInt(Integer::intValue).toArray();
    }
}
