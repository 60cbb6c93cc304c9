package dev.relayfarm.types;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeRelation;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The constraint solver of Relay's type inference: a union-find over type holes
 * ({@link IncompleteType}) plus a queue of type relations and the bipartite dependency graph between
 * them (each unsolved relation is registered on the holes its types still contain).
 *
 * <p>Unification binds a hole to a type or merges two holes; whenever a hole learns something, only
 * the relations registered on it are re-queued. {@link #solve()} runs queued relations until the
 * queue is empty (the fixpoint); a relation that returns {@code false} waits for its holes to change.
 *
 * <p>Shapes are gradual: {@code ?} ({@link Dim.Any}) unifies with any dimension and the result keeps
 * the more precise one, so a hole first bound to {@code Tensor[(?), f32]} and later unified with
 * {@code Tensor[(3), f32]} is re-bound to the latter. Symbolic dimensions compare after
 * {@link Dims#simplify}. Dtypes must match exactly. Type variables ({@link TypeVar}) are rigid.
 *
 * <p>Not here: walking expressions (see {@code Inferencer}) and formatting diagnostics.
 */
final class TypeSolver {

    /** A union-find node for one hole; only roots carry a binding and dependents. */
    private static final class Hole {
        final IncompleteType name;
        Hole parent;
        int rank;
        /** What the hole stands for (never itself a hole), or null while unknown. */
        Type binding;
        /** Relations to re-queue when this hole learns something; null when none. */
        List<Relation> dependents;

        Hole(IncompleteType name) {
            this.name = name;
        }
    }

    /** How a relation is solved: {@link dev.relayfarm.ops.TypeRelationFn} with its attributes already bound. */
    @FunctionalInterface
    interface Rule {
        boolean solve(List<Type> types, TypeReporter reporter);
    }

    /**
     * One relation instance, e.g. the {@code nn.conv2d} relation of one call: its argument types
     * (inputs then the output) and where it came from, for diagnostics.
     */
    static final class Relation {
        final String name;
        final List<Type> types;
        final Rule rule;
        final Span span;
        final String global;
        boolean solved;
        boolean queued;
        boolean dead;

        Relation(String name, List<Type> types, Rule rule, Span span, String global) {
            this.name = name;
            this.types = List.copyOf(types);
            this.rule = rule;
            this.span = span;
            this.global = global;
        }

        boolean pending() {
            return !solved && !dead;
        }
    }

    /** Unification failed; {@code detail} names the innermost conflict, e.g. "dimension 1: 4 vs 5". */
    static final class UnifyException extends RuntimeException {
        /** The conflict is inside the compared types (a field, an argument), not at their top. */
        boolean nested;
        /** The detail says more than the two printed types do (a dimension, a rank, an arity). */
        final boolean informative;

        UnifyException(String detail, boolean informative) {
            super(detail, null, false, false);
            this.informative = informative;
        }

        UnifyException(String detail) {
            this(detail, false);
        }
    }

    /** A relation rejected its types; carries the relation and its message. */
    static final class RelationFailure extends RuntimeException {
        final transient Relation relation;

        RelationFailure(Relation relation, String message) {
            super(message, null, false, false);
            this.relation = relation;
        }
    }

    private final Map<IncompleteType, Hole> holes = new HashMap<>();
    private final ArrayDeque<Relation> queue = new ArrayDeque<>();
    private final List<Relation> relations = new ArrayList<>();
    private long runs;

    private final TypeReporter reporter = new TypeReporter() {
        @Override
        public void assign(Type a, Type b) {
            try {
                unify(a, b);
            } catch (UnifyException e) {
                throw new RelationException(mismatchMessage(a, b, e));
            }
        }

        @Override
        public Type resolve(Type t) {
            return TypeSolver.this.resolve(t);
        }
    };

    IncompleteType fresh() {
        return IncompleteType.fresh();
    }

    // ---------------------------------------------------------------- union-find

    private Hole find(IncompleteType t) {
        Hole h = holes.computeIfAbsent(t, Hole::new);
        Hole root = h;
        while (root.parent != null) root = root.parent;
        while (h.parent != null && h.parent != root) {
            Hole next = h.parent;
            h.parent = root;
            h = next;
        }
        return root;
    }

    private static Type valueOf(Hole root) {
        return root.binding != null ? root.binding : root.name;
    }

    /** {@code t} with its outermost hole replaced by what it stands for (one level only). */
    Type shallow(Type t) {
        return t instanceof IncompleteType i ? valueOf(find(i)) : t;
    }

    /** {@code t} with every solved hole substituted, recursively; unsolved holes stay (as their root). */
    Type resolve(Type t) {
        return switch (t) {
            case IncompleteType i -> {
                Hole root = find(i);
                yield root.binding == null ? root.name : resolve(root.binding);
            }
            case TensorType tt -> tt;
            case TypeVar v -> v;
            case GlobalTypeVar g -> g;
            case TupleType tt -> {
                List<Type> fields = resolveAll(tt.fields());
                yield fields == tt.fields() ? tt : new TupleType(fields);
            }
            case FuncType f -> {
                List<Type> args = resolveAll(f.argTypes());
                Type ret = resolve(f.retType());
                yield args == f.argTypes() && ret == f.retType() ? f : new FuncType(f.typeParams(), args, ret, f.constraints());
            }
            case TypeCall c -> {
                List<Type> args = resolveAll(c.args());
                Type func = resolve(c.func());
                yield args == c.args() && func == c.func() ? c : new TypeCall(func, args);
            }
            case RefType r -> {
                Type v = resolve(r.value());
                yield v == r.value() ? r : new RefType(v);
            }
        };
    }

    private List<Type> resolveAll(List<Type> ts) {
        List<Type> out = null;
        for (int i = 0; i < ts.size(); i++) {
            Type r = resolve(ts.get(i));
            if (r != ts.get(i) && out == null) out = new ArrayList<>(ts.subList(0, i));
            if (out != null) out.add(r);
        }
        return out == null ? ts : out;
    }

    /**
     * The final form of {@code t} once solving is over: resolved, with shape dimensions simplified
     * ({@code n + n} becomes {@code 2 * n}). Memoized per hole, since a 100k-node program resolves
     * the same holes many times.
     */
    private Type finalType(Type t, Map<Hole, Type> memo) {
        return switch (t) {
            case IncompleteType i -> {
                Hole root = find(i);
                if (root.binding == null) yield root.name;
                Type done = memo.get(root);
                if (done == null) {
                    done = finalType(root.binding, memo);
                    memo.put(root, done);
                }
                yield done;
            }
            case TensorType tt -> {
                List<Dim> dims = null;
                for (int k = 0; k < tt.shape().size(); k++) {
                    Dim d = tt.shape().get(k);
                    Dim s = d instanceof Dim.Bin ? Dims.simplify(d) : d;
                    if (!s.equals(d) && dims == null) dims = new ArrayList<>(tt.shape().subList(0, k));
                    if (dims != null) dims.add(s);
                }
                yield dims == null ? tt : new TensorType(dims, tt.dtype());
            }
            case TypeVar v -> v;
            case GlobalTypeVar g -> g;
            case TupleType tt -> new TupleType(tt.fields().stream().map(f -> finalType(f, memo)).toList());
            case FuncType f -> new FuncType(f.typeParams(), f.argTypes().stream().map(a -> finalType(a, memo)).toList(),
                    finalType(f.retType(), memo), f.constraints());
            case TypeCall c -> new TypeCall(finalType(c.func(), memo), c.args().stream().map(a -> finalType(a, memo)).toList());
            case RefType r -> new RefType(finalType(r.value(), memo));
        };
    }

    /** A resolver to final types sharing one memo; use once solving is over. */
    UnaryOperator<Type> finalizer() {
        Map<Hole, Type> memo = new IdentityHashMap<>();
        return t -> finalType(t, memo);
    }

    /** True when {@code t} (resolved) still contains a hole. */
    static boolean hasHole(Type t) {
        return switch (t) {
            case IncompleteType i -> true;
            case TensorType tt -> false;
            case TypeVar v -> false;
            case GlobalTypeVar g -> false;
            case TupleType tt -> tt.fields().stream().anyMatch(TypeSolver::hasHole);
            case FuncType f -> hasHole(f.retType()) || f.argTypes().stream().anyMatch(TypeSolver::hasHole);
            case TypeCall c -> hasHole(c.func()) || c.args().stream().anyMatch(TypeSolver::hasHole);
            case RefType r -> hasHole(r.value());
        };
    }

    // ---------------------------------------------------------------- unification

    /**
     * Makes {@code expected} and {@code actual} equal, binding holes; returns the unified type (with
     * gradual dimensions, the more precise of the two). Throws {@link UnifyException} on conflict.
     */
    Type unify(Type expected, Type actual) {
        if (expected == actual) return expected;
        Hole ha = expected instanceof IncompleteType ia ? find(ia) : null;
        Hole hb = actual instanceof IncompleteType ib ? find(ib) : null;
        if (ha == null && hb == null) return unifyConcrete(expected, actual);
        if (ha != null && hb != null) {
            if (ha == hb) return valueOf(ha);
            Type merged;
            if (ha.binding == null) merged = hb.binding;
            else if (hb.binding == null) merged = ha.binding;
            else merged = unifyConcrete(ha.binding, hb.binding);
            // Nested unification may have re-rooted either hole.
            ha = find(ha.name);
            hb = find(hb.name);
            // Occurs check before the union: uniting first and then failing would leave a cycle
            // behind (e.g. ?h := ref(?v) merged with ?v: the root keeps ref(?v) while ?v now points
            // to the root), and resolving it for the message, or later, never terminates.
            if (merged != null) {
                occursCheck(ha, merged);
                if (hb != ha) occursCheck(hb, merged);
            }
            Hole root = ha == hb ? ha : union(ha, hb);
            if (merged != null) root.binding = merged;
            wake(root);
            return valueOf(root);
        }
        Hole h = ha != null ? ha : hb;
        Type other = ha != null ? actual : expected;
        if (h.binding == null) {
            occursCheck(h, other);
            h.binding = other;
            wake(h);
            return other;
        }
        Type bound = h.binding;
        Type merged = ha != null ? unifyConcrete(bound, other) : unifyConcrete(other, bound);
        h = find(h.name);
        if (h.binding == bound && !merged.equals(bound)) {
            occursCheck(h, merged);
            h.binding = merged;
            wake(h);
        }
        return merged;
    }

    private Hole union(Hole a, Hole b) {
        if (a.rank < b.rank) {
            Hole t = a;
            a = b;
            b = t;
        }
        b.parent = a;
        if (a.rank == b.rank) a.rank++;
        if (b.dependents != null) {
            if (a.dependents == null) a.dependents = b.dependents;
            else a.dependents.addAll(b.dependents);
            b.dependents = null;
        }
        return a;
    }

    private void occursCheck(Hole h, Type t) {
        if (mentions(h, t)) {
            throw new UnifyException("infinite type: a type would contain itself: " + resolve(t), true);
        }
    }

    private boolean mentions(Hole h, Type t) {
        return switch (t) {
            case IncompleteType i -> {
                Hole r = find(i);
                yield r == h || (r.binding != null && mentions(h, r.binding));
            }
            case TensorType tt -> false;
            case TypeVar v -> false;
            case GlobalTypeVar g -> false;
            case TupleType tt -> tt.fields().stream().anyMatch(f -> mentions(h, f));
            case FuncType f -> mentions(h, f.retType()) || f.argTypes().stream().anyMatch(a -> mentions(h, a));
            case TypeCall c -> mentions(h, c.func()) || c.args().stream().anyMatch(a -> mentions(h, a));
            case RefType r -> mentions(h, r.value());
        };
    }

    /** An ADT without type parameters may appear as {@code Nat} or as {@code Nat[]}. */
    private static Type normalize(Type t) {
        return t instanceof TypeCall(Type func, List<Type> args) && args.isEmpty() ? func : t;
    }

    /** Unifies the components of two types; a conflict found in a component is marked nested. */
    private Type unifyPart(Type a, Type b) {
        try {
            return unify(a, b);
        } catch (UnifyException e) {
            e.nested = true;
            throw e;
        }
    }

    private Type unifyConcrete(Type a0, Type b0) {
        Type a = normalize(a0);
        Type b = normalize(b0);
        if (a.equals(b)) return a;
        return switch (a) {
            case TensorType ta when b instanceof TensorType tb -> unifyTensors(ta, tb);
            case TupleType ta when b instanceof TupleType tb -> {
                if (ta.fields().size() != tb.fields().size()) {
                    throw new UnifyException("tuple of " + ta.fields().size() + " fields vs tuple of " + tb.fields().size(), true);
                }
                List<Type> fields = unifyAll(ta.fields(), tb.fields());
                yield fields == ta.fields() ? ta : new TupleType(fields);
            }
            case FuncType fa when b instanceof FuncType fb0 -> {
                if (fa.typeParams().size() != fb0.typeParams().size()) {
                    throw new UnifyException("function with " + fa.typeParams().size() + " type parameter(s) vs "
                            + fb0.typeParams().size());
                }
                FuncType fb = fb0;
                if (!fa.typeParams().isEmpty()) {
                    // Alpha-rename b's type parameters to a's before comparing.
                    Map<TypeVar, Type> rename = new HashMap<>();
                    for (int i = 0; i < fa.typeParams().size(); i++) rename.put(fb0.typeParams().get(i), fa.typeParams().get(i));
                    fb = (FuncType) substitute(fb0, rename);
                }
                if (fa.argTypes().size() != fb.argTypes().size()) {
                    throw new UnifyException("function of " + plural(fa.argTypes().size(), "parameter") + " vs function of "
                            + plural(fb.argTypes().size(), "parameter"), true);
                }
                List<Type> args = unifyAll(fa.argTypes(), fb.argTypes());
                Type ret = unifyPart(fa.retType(), fb.retType());
                yield args == fa.argTypes() && ret == fa.retType() ? fa
                        : new FuncType(fa.typeParams(), args, ret, fa.constraints());
            }
            case TypeCall ca when b instanceof TypeCall cb -> {
                if (!normalize(ca.func()).equals(normalize(cb.func())) || ca.args().size() != cb.args().size()) {
                    throw new UnifyException(ca + " vs " + cb);
                }
                List<Type> args = unifyAll(ca.args(), cb.args());
                yield args == ca.args() ? ca : new TypeCall(ca.func(), args);
            }
            case RefType ra when b instanceof RefType rb -> {
                Type v = unifyPart(ra.value(), rb.value());
                yield v == ra.value() ? ra : new RefType(v);
            }
            case IncompleteType i -> unify(a, b);
            default -> {
                if (b instanceof IncompleteType) yield unify(a, b);
                throw new UnifyException(resolve(a) + " vs " + resolve(b));
            }
        };
    }

    private List<Type> unifyAll(List<Type> as, List<Type> bs) {
        List<Type> out = null;
        for (int i = 0; i < as.size(); i++) {
            Type u = unifyPart(as.get(i), bs.get(i));
            if (u != as.get(i) && out == null) out = new ArrayList<>(as.subList(0, i));
            if (out != null) out.add(u);
        }
        return out == null ? as : out;
    }

    private static TensorType unifyTensors(TensorType a, TensorType b) {
        if (!a.dtype().equals(b.dtype())) throw new UnifyException("dtype " + a.dtype() + " vs " + b.dtype());
        if (a.rank() != b.rank()) throw new UnifyException("rank " + a.rank() + " vs " + b.rank(), true);
        List<Dim> dims = null;
        for (int i = 0; i < a.rank(); i++) {
            Dim da = a.shape().get(i);
            Dim db = b.shape().get(i);
            Dim d;
            if (da.equals(db) || db instanceof Dim.Any) {
                d = da;
            } else if (da instanceof Dim.Any) {
                d = db;
            } else if (Dims.simplify(da).equals(Dims.simplify(db))) {
                d = da;
            } else {
                throw new UnifyException("dimension " + i + ": " + da + " vs " + db, true);
            }
            if (d != da && dims == null) dims = new ArrayList<>(a.shape().subList(0, i));
            if (dims != null) dims.add(d);
        }
        return dims == null ? a : new TensorType(dims, a.dtype());
    }

    /** {@code t} with type variables replaced per {@code map}. */
    static Type substitute(Type t, Map<TypeVar, Type> map) {
        if (map.isEmpty()) return t;
        return switch (t) {
            case TypeVar v -> map.getOrDefault(v, v);
            case IncompleteType i -> i;
            case TensorType tt -> tt;
            case GlobalTypeVar g -> g;
            case TupleType tt -> new TupleType(tt.fields().stream().map(f -> substitute(f, map)).toList());
            case FuncType f -> {
                // Inner type parameters shadow outer ones.
                Map<TypeVar, Type> inner = map;
                if (!f.typeParams().isEmpty()) {
                    inner = new HashMap<>(map);
                    f.typeParams().forEach(inner::remove);
                }
                Map<TypeVar, Type> m = inner;
                yield new FuncType(f.typeParams(), f.argTypes().stream().map(a -> substitute(a, m)).toList(),
                        substitute(f.retType(), m), f.constraints().stream()
                                .map(r -> new TypeRelation(r.name(), r.args().stream().map(a -> substitute(a, m)).toList(),
                                        r.numInputs(), r.attrs()))
                                .toList());
            }
            case TypeCall c -> new TypeCall(substitute(c.func(), map), c.args().stream().map(a -> substitute(a, map)).toList());
            case RefType r -> new RefType(substitute(r.value(), map));
        };
    }

    /** "expected A, got B (detail)" with both types as currently known. */
    String mismatchMessage(Type expected, Type actual, UnifyException e) {
        String a = resolve(expected).toString();
        String b = resolve(actual).toString();
        String detail = e.getMessage();
        String base = "expected " + a + ", got " + b;
        boolean useful = (e.nested || e.informative) && detail != null && !detail.equals(a + " vs " + b);
        return useful ? base + " (" + detail + ")" : base;
    }

    static String plural(int n, String noun) {
        return n + " " + noun + (n == 1 ? "" : "s");
    }

    // ---------------------------------------------------------------- relations

    /** Adds a relation and queues it for its first run. */
    Relation addRelation(String name, List<Type> types, Rule rule, Span span, String global) {
        Relation r = new Relation(name, types, rule, span, global);
        relations.add(r);
        enqueue(r);
        return r;
    }

    private void enqueue(Relation r) {
        if (r.pending() && !r.queued) {
            r.queued = true;
            queue.add(r);
        }
    }

    /** A hole learned something: re-queue exactly the relations waiting on it. */
    private void wake(Hole root) {
        List<Relation> deps = root.dependents;
        if (deps == null) return;
        // A relation that still defers after running registers itself again.
        root.dependents = null;
        for (Relation r : deps) enqueue(r);
    }

    /**
     * Runs queued relations until none is left. A relation that defers is registered on the holes
     * its types still contain and runs again only when one of them changes. Bounded: a relation
     * system that keeps changing without converging is a compiler bug and fails loudly.
     */
    void solve() {
        long limit = 1_000L + 64L * relations.size();
        Relation r;
        while ((r = queue.poll()) != null) {
            r.queued = false;
            if (!r.pending()) continue;
            if (++runs > limit) {
                throw new IllegalStateException("type relations did not converge after " + runs + " runs (last: " + r.name + ")");
            }
            List<Type> resolved = new ArrayList<>(r.types.size());
            for (Type t : r.types) resolved.add(resolve(t));
            boolean done;
            try {
                done = r.rule.solve(resolved, reporter);
            } catch (RelationException e) {
                throw new RelationFailure(r, e.getMessage());
            } catch (UnifyException e) {
                throw new RelationFailure(r, e.getMessage());
            }
            if (done) {
                r.solved = true;
            } else {
                for (Type t : r.types) register(r, t);
            }
        }
    }

    private void register(Relation r, Type t) {
        switch (t) {
            case IncompleteType i -> {
                Hole root = find(i);
                if (root.binding != null) {
                    register(r, root.binding);
                } else {
                    if (root.dependents == null) root.dependents = new ArrayList<>(2);
                    root.dependents.add(r);
                }
            }
            case TensorType tt -> {}
            case TypeVar v -> {}
            case GlobalTypeVar g -> {}
            case TupleType tt -> tt.fields().forEach(f -> register(r, f));
            case FuncType f -> {
                f.argTypes().forEach(a -> register(r, a));
                register(r, f.retType());
            }
            case TypeCall c -> c.args().forEach(a -> register(r, a));
            case RefType rt -> register(r, rt.value());
        }
    }

    /** Relations neither solved nor abandoned, in creation order. */
    List<Relation> unsolved() {
        return relations.stream().filter(Relation::pending).toList();
    }

    /** Abandons relations (of a function that already failed), so they cause no further errors. */
    void kill(Predicate<Relation> which) {
        for (Relation r : relations) if (which.test(r)) r.dead = true;
    }

    long relationRuns() {
        return runs;
    }
}
