package dev.relayfarm.types;

import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.TypeData;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Is a complete {@code match} exhaustive? The classic pattern-matrix algorithm: specialize the rows
 * by each constructor of the first column's ADT (or by tuple arity), drop the column when it holds
 * only wildcards, and recurse; a constructor left without any matching row yields a witness value
 * that no clause matches, e.g. {@code Cons(_, Nil)}. Recursion depth is bounded by pattern nesting.
 */
final class Exhaustiveness {
    private final IRModule module;

    private Exhaustiveness(IRModule module) {
        this.module = module;
    }

    /** A value (in pattern syntax) that none of {@code patterns} matches, or empty if they cover all. */
    static Optional<String> uncovered(IRModule module, List<Pattern> patterns) {
        List<List<Pattern>> rows = new ArrayList<>();
        for (Pattern p : patterns) rows.add(List.of(p));
        List<String> w = new Exhaustiveness(module).missing(rows, 1);
        return w == null ? Optional.empty() : Optional.of(w.get(0));
    }

    /** A witness row of {@code width} patterns matched by no row, or null when the rows are exhaustive. */
    private List<String> missing(List<List<Pattern>> rows, int width) {
        if (width == 0) return rows.isEmpty() ? new ArrayList<>() : null;
        Constructor ctor = null;
        int tupleArity = -1;
        for (List<Pattern> row : rows) {
            switch (row.get(0)) {
                case Pattern.Ctor c -> ctor = ctor == null ? c.constructor() : ctor;
                case Pattern.TuplePattern t -> tupleArity = t.fields().size();
                case Pattern.Wildcard w -> {}
                case Pattern.Bind b -> {}
            }
        }
        if (ctor != null) {
            TypeData td = module.types().get(ctor.belongsTo());
            List<Constructor> all = td != null ? td.constructors() : List.of(ctor);
            for (Constructor c : all) {
                int arity = c.inputs().size();
                List<String> w = missing(specialize(rows, c, arity), arity + width - 1);
                if (w != null) {
                    List<String> out = new ArrayList<>();
                    List<String> args = w.subList(0, arity);
                    out.add(arity == 0 ? c.name() : c.name() + "(" + String.join(", ", args) + ")");
                    out.addAll(w.subList(arity, w.size()));
                    return out;
                }
            }
            return null;
        }
        if (tupleArity >= 0) {
            int k = tupleArity;
            List<List<Pattern>> spec = new ArrayList<>();
            for (List<Pattern> row : rows) {
                List<Pattern> next = new ArrayList<>();
                if (row.get(0) instanceof Pattern.TuplePattern t) {
                    if (t.fields().size() != k) continue;
                    next.addAll(t.fields());
                } else {
                    next.addAll(Collections.nCopies(k, Pattern.WILDCARD));
                }
                next.addAll(row.subList(1, row.size()));
                spec.add(next);
            }
            List<String> w = missing(spec, k + width - 1);
            if (w == null) return null;
            List<String> out = new ArrayList<>();
            out.add("(" + String.join(", ", w.subList(0, k)) + (k == 1 ? ",)" : ")"));
            out.addAll(w.subList(k, w.size()));
            return out;
        }
        List<List<Pattern>> rest = new ArrayList<>();
        for (List<Pattern> row : rows) rest.add(row.subList(1, row.size()));
        List<String> w = missing(rest, width - 1);
        if (w == null) return null;
        w.add(0, "_");
        return w;
    }

    private static List<List<Pattern>> specialize(List<List<Pattern>> rows, Constructor c, int arity) {
        List<List<Pattern>> out = new ArrayList<>();
        for (List<Pattern> row : rows) {
            List<Pattern> next = new ArrayList<>();
            switch (row.get(0)) {
                case Pattern.Ctor p -> {
                    if (!p.constructor().equals(c)) continue;
                    next.addAll(p.args());
                }
                case Pattern.Wildcard w -> next.addAll(Collections.nCopies(arity, Pattern.WILDCARD));
                case Pattern.Bind b -> next.addAll(Collections.nCopies(arity, Pattern.WILDCARD));
                case Pattern.TuplePattern t -> {
                    continue;
                }
            }
            next.addAll(row.subList(1, row.size()));
            out.add(next);
        }
        return out;
    }
}
