package dev.relayfarm.compile;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralHash;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The distinct kernels of the Primitive functions a program calls, in order of first call: structurally equal
 * functions share one kernel, named {@code fused_<ops>_<n>} (TVM's naming, with a counter when two different
 * kernels fuse the same ops). The graph executor ({@link GraphBuilder}) and the VM compiler build their kernel
 * tables with it, so both backends give a model's kernels the same names.
 */
public final class KernelTable {
    private final List<GraphPlan.Kernel> kernels = new ArrayList<>();
    private final Map<Function, Integer> ofFunction = new IdentityHashMap<>();
    private final Map<Integer, List<Integer>> byHash = new HashMap<>();
    private final Map<String, Integer> names = new HashMap<>();

    /** The index of {@code f}'s kernel, added if no structurally equal function has one yet. */
    public int indexOf(Function f) {
        Integer known = ofFunction.get(f);
        if (known != null) return known;
        int h = StructuralHash.hash(f);
        for (int k : byHash.getOrDefault(h, List.of())) {
            if (StructuralEquality.equal(kernels.get(k).primitive(), f)) {
                ofFunction.put(f, k);
                return k;
            }
        }
        String base = baseName(f);
        int n = names.merge(base, 1, Integer::sum);
        kernels.add(new GraphPlan.Kernel(base + "_" + (n - 1), f));
        ofFunction.put(f, kernels.size() - 1);
        byHash.computeIfAbsent(h, x -> new ArrayList<>()).add(kernels.size() - 1);
        return kernels.size() - 1;
    }

    public GraphPlan.Kernel get(int index) {
        return kernels.get(index);
    }

    /** The kernels so far, in index order (a copy). */
    public List<GraphPlan.Kernel> kernels() {
        return List.copyOf(kernels);
    }

    /** {@code fused_} and the fused function's operators in evaluation order (cut at about 60 characters): a kernel's name before its counter. */
    public static String baseName(Function f) {
        StringBuilder sb = new StringBuilder("fused");
        for (Expr e : ExprTraversal.postOrder(f.body())) {
            if (e instanceof Call c && c.callee() instanceof Op op && sb.length() < 60) sb.append('_').append(op.name().replaceAll("[^A-Za-z0-9]", "_"));
        }
        return sb.toString();
    }
}
