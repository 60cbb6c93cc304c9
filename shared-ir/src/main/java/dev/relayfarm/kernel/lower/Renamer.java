package dev.relayfarm.kernel.lower;

import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gives the computes of a group unique stage names: operator computes are named after their op
 * ({@code add}, {@code T_relu}), and one group often has two of a kind, while a schedule addresses
 * stages by name. Each new compute is rebuilt with a fresh name (same id, axes and body, its reads
 * redirected to the renamed producers); computes seen before keep theirs.
 */
final class Renamer {
    private final Map<Long, Tensor> renamed = new HashMap<>();
    private final Set<String> used = new HashSet<>();

    /** Registers a tensor whose name is final (a parameter, a template stage; usually a name from {@link #fresh}). */
    void keep(Tensor t) {
        used.add(t.name());
        renamed.put(t.id(), t);
    }

    String fresh(String base) {
        String clean = base.replaceAll("[^A-Za-z0-9_]", "_");
        String n = clean;
        for (int i = 1; !used.add(n); i++) n = clean + "_" + i;
        return n;
    }

    /** {@code t} with every compute reachable from it that is new here renamed (producers first). */
    Tensor rename(Tensor t) {
        if (renamed.containsKey(t.id())) return renamed.get(t.id());
        List<Compute> order = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        ArrayDeque<Tensor> stack = new ArrayDeque<>();
        ArrayDeque<Boolean> expanded = new ArrayDeque<>();
        stack.push(t);
        expanded.push(false);
        while (!stack.isEmpty()) {
            Tensor x = stack.pop();
            boolean done = expanded.pop();
            if (renamed.containsKey(x.id())) continue;
            switch (x) {
                case Placeholder p -> throw new IllegalStateException("compute reads placeholder " + p.name() + " that is not a parameter of the group");
                case Compute c -> {
                    if (done) {
                        if (seen.add(c.id())) order.add(c);
                        continue;
                    }
                    stack.push(c);
                    expanded.push(true);
                    for (Tensor in : c.inputs()) {
                        if (!renamed.containsKey(in.id()) && !seen.contains(in.id())) {
                            stack.push(in);
                            expanded.push(false);
                        }
                    }
                }
            }
        }
        for (Compute c : order) {
            if (renamed.containsKey(c.id())) continue;
            PrimExpr body = PrimExprs.map(c.body(), e -> e instanceof TensorLoad tl && renamed.get(tl.tensor().id()) != tl.tensor()
                    ? new TensorLoad(renamed.get(tl.tensor().id()), tl.indices()) : e);
            renamed.put(c.id(), new Compute(fresh(c.name()), c.axes(), body, c.id()));
        }
        return renamed.get(t.id());
    }
}
