package dev.relayfarm.frontend;

import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One ONNX graph being converted (the model's graph, or a subgraph of If/Loop/Scan): the values
 * its names stand for, and the {@code let} bindings it has introduced, in order.
 *
 * <p>Why bindings: a subgraph becomes a nested block (an {@code if} branch, a loop function body).
 * An outer value it uses must not be a dataflow node shared between the outer and the inner block —
 * the text printer would bind it in whichever block it meets it first, and a loop body would
 * re-evaluate it on every iteration. So the first time an inner graph refers to a computed outer
 * value, the outer graph binds it with {@code let} (just before the node being converted) and from
 * then on the name stands for that variable, in every scope.
 */
final class GraphScope {
    private final GraphScope parent;
    private final Function<Expr, Type> typeOf;
    private final Map<String, Expr> values = new HashMap<>();
    /** Where this graph's lets go: its own list, or (for an expanded function body) the caller's. */
    private final List<Let> bindings; // each Let's body is unused: (var, value) pairs in order

    private GraphScope(GraphScope parent, Function<Expr, Type> typeOf, List<Let> bindings) {
        this.parent = parent;
        this.typeOf = typeOf;
        this.bindings = bindings;
    }

    /** The model's main graph. */
    static GraphScope root(Function<Expr, Type> typeOf) {
        return new GraphScope(null, typeOf, new ArrayList<>());
    }

    /** A subgraph (a nested block) that can refer to this graph's values. */
    GraphScope child() {
        return new GraphScope(this, typeOf, new ArrayList<>());
    }

    /**
     * A subgraph whose nodes run as if they stood here (a branch taken for certain): it sees this
     * graph's values, keeps its own names, and its bindings are this graph's.
     */
    GraphScope inlined() {
        return new GraphScope(this, typeOf, bindings);
    }

    /**
     * The body of a model-local function expanded in this graph: it sees only its own names (a
     * function has no access to its caller's values), but its bindings become the caller's, since
     * the expansion is inlined where the call was.
     */
    GraphScope functionBody() {
        return new GraphScope(null, typeOf, bindings);
    }

    void define(String name, Expr value) {
        values.put(name, value);
    }

    boolean definesLocally(String name) {
        return values.containsKey(name);
    }

    /** What {@code name} stands for here, or null when no enclosing graph defines it. */
    Expr lookup(String name) {
        Expr local = values.get(name);
        if (local != null) return local;
        GraphScope owner = parent;
        while (owner != null && !owner.values.containsKey(name)) owner = owner.parent;
        if (owner == null) return null;
        Expr e = owner.values.get(name);
        if (atomic(e)) return e;
        Var v = owner.bind(sanitize(name), e);
        owner.values.put(name, v);
        return v;
    }

    /** Binds {@code value} to a fresh variable (typed) with a {@code let} at the current end of this graph. */
    Var bind(String hint, Expr value) {
        Var v = Var.fresh(hint, typeOf.apply(value));
        bindings.add(new Let(v, value, v));
        return v;
    }

    /** Binds {@code value} to the given variable (e.g. a recursive function's own name). */
    void bind(Var v, Expr value) {
        typeOf.apply(value); // a type error inside surfaces now, at the node being converted
        bindings.add(new Let(v, value, v));
    }

    /** {@code let ...; result} over this graph's bindings, built back to front (no recursion). */
    Expr wrap(Expr result) {
        Expr body = result;
        for (int i = bindings.size() - 1; i >= 0; i--) body = new Let(bindings.get(i).var(), bindings.get(i).value(), body);
        return body;
    }

    private static boolean atomic(Expr e) {
        return e instanceof Var || e instanceof Constant || e instanceof GlobalVar || e instanceof Op || e instanceof Constructor;
    }

    static String sanitize(String name) {
        String s = name.replaceAll("[^A-Za-z0-9_]", "_");
        return s.isEmpty() || Character.isDigit(s.charAt(0)) ? "v" + s : s;
    }
}
