package dev.relayfarm.frontend;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Types what an importer builds, node by node as it is created, by running each operator's relation
 * forward. Importers need the types of what they have built so far (ranks for Flatten, shapes for
 * Shape), long before the whole program exists for full inference. Memoized by identity; iterative,
 * so long graphs cannot overflow the stack.
 *
 * <p>Beyond dataflow it types the control flow importers build, without unification: every binder
 * the importer creates is annotated (let variables, function parameters, pattern variables, and a
 * recursive function's own name with its function type), a function's type is its parameters' and
 * its body's, an {@code if} or {@code match} has the join of its arms (dims that differ become
 * {@code ?}), and a constructor call's type arguments are read off its arguments. What cannot be
 * derived that way (an empty list's element type) the importer {@link #declare declares}.
 */
final class ForwardTyper {
    private final Map<Expr, Type> types = new IdentityHashMap<>();

    /** Records the type of a node this typer cannot derive alone (e.g. {@code Nil}). */
    void declare(Expr e, Type t) {
        types.put(e, t);
    }

    /** The type of {@code e}; throws RelationException when an operator rejects its arguments. */
    Type typeOf(Expr e) {
        Type known = types.get(e);
        if (known != null) return known;
        ArrayDeque<Expr> stack = new ArrayDeque<>();
        stack.push(e);
        while (!stack.isEmpty()) {
            Expr top = stack.peek();
            if (types.containsKey(top)) {
                stack.pop();
                continue;
            }
            List<Expr> pending = new ArrayList<>();
            for (Expr c : top.children()) if (!types.containsKey(c) && !(c instanceof Op) && !(c instanceof Constructor)) pending.add(c);
            if (!pending.isEmpty()) {
                pending.forEach(stack::push);
                continue;
            }
            stack.pop();
            types.put(top, node(top));
        }
        return types.get(e);
    }

    private Type node(Expr e) {
        return switch (e) {
            case Var v -> {
                if (v.annotation() == null) throw new IllegalStateException("importer variable without a type: " + v);
                yield v.annotation();
            }
            case Constant c -> c.type();
            case Tuple t -> new TupleType(t.fields().stream().map(types::get).toList());
            case TupleGetItem t -> {
                if (!(types.get(t.tuple()) instanceof TupleType tt)) throw new RelationException("projection ." + t.index() + " of a non-tuple");
                if (t.index() < 0 || t.index() >= tt.fields().size()) {
                    throw new RelationException("tuple index " + t.index() + " out of range for " + tt);
                }
                yield tt.fields().get(t.index());
            }
            case Call c when c.callee() instanceof Op op -> {
                List<Type> args = c.args().stream().map(types::get).toList();
                yield OpRegistry.get(op.name()).inferOutput(args, c.attrs())
                        .orElseThrow(() -> new RelationException(op.name() + ": cannot infer the result type from " + args));
            }
            case Call c when c.callee() instanceof Constructor k -> constructed(k, c.args().stream().map(types::get).toList());
            case Call c -> {
                if (!(types.get(c.callee()) instanceof FuncType ft)) throw new RelationException("call of a non-function " + types.get(c.callee()));
                if (ft.argTypes().size() != c.args().size()) {
                    throw new RelationException("function of " + ft.argTypes().size() + " parameters called with " + c.args().size() + " arguments");
                }
                yield ft.retType();
            }
            case Let l -> types.get(l.body());
            case If i -> join(types.get(i.thenBranch()), types.get(i.elseBranch()));
            case Function f -> new FuncType(f.params().stream().map(p -> {
                if (p.annotation() == null) throw new IllegalStateException("importer parameter without a type: " + p);
                return p.annotation();
            }).toList(), f.retType() != null ? f.retType() : types.get(f.body()));
            case Match m -> {
                Type t = null;
                for (Clause cl : m.clauses()) t = t == null ? types.get(cl.body()) : join(t, types.get(cl.body()));
                if (t == null) throw new RelationException("match without clauses");
                yield t;
            }
            default -> throw new IllegalStateException("the importer does not build " + e);
        };
    }

    /** The ADT type of {@code K(args)}, with each type parameter read off the argument in its place. */
    private static Type constructed(Constructor k, List<Type> args) {
        Map<TypeVar, Type> bound = new HashMap<>();
        for (int i = 0; i < k.inputs().size() && i < args.size(); i++) match(k.inputs().get(i), args.get(i), bound);
        List<TypeVar> params = new ArrayList<>();
        for (Type in : k.inputs()) collectVars(in, params);
        if (params.isEmpty() && k.inputs().isEmpty()) {
            throw new RelationException("the type of a nullary constructor " + k.name() + " must be declared");
        }
        List<Type> targs = new ArrayList<>();
        for (TypeVar v : params) {
            Type t = bound.get(v);
            if (t == null) throw new RelationException("cannot tell " + v + " of " + k.name() + " from " + args);
            targs.add(t);
        }
        return new TypeCall(k.belongsTo(), targs);
    }

    private static void match(Type pattern, Type actual, Map<TypeVar, Type> bound) {
        switch (pattern) {
            case TypeVar v -> bound.merge(v, actual, ForwardTyper::join);
            case TypeCall pc when actual instanceof TypeCall ac && pc.args().size() == ac.args().size() -> {
                for (int i = 0; i < pc.args().size(); i++) match(pc.args().get(i), ac.args().get(i), bound);
            }
            case TupleType pt when actual instanceof TupleType at && pt.fields().size() == at.fields().size() -> {
                for (int i = 0; i < pt.fields().size(); i++) match(pt.fields().get(i), at.fields().get(i), bound);
            }
            default -> { }
        }
    }

    private static void collectVars(Type t, List<TypeVar> out) {
        switch (t) {
            case TypeVar v -> {
                if (!out.contains(v)) out.add(v);
            }
            case TypeCall c -> c.args().forEach(a -> collectVars(a, out));
            case TupleType tt -> tt.fields().forEach(f -> collectVars(f, out));
            default -> { }
        }
    }

    /**
     * The least general type covering both: equal types stay, tensors of one dtype and rank keep the
     * dims they agree on and get {@code ?} elsewhere; anything else is an error (ONNX lets If
     * branches differ in shape, not in kind).
     */
    static Type join(Type a, Type b) {
        if (a.equals(b)) return a;
        if (a instanceof TensorType ta && b instanceof TensorType tb && ta.dtype().equals(tb.dtype()) && ta.rank() == tb.rank()) {
            List<Dim> dims = new ArrayList<>();
            for (int i = 0; i < ta.rank(); i++) dims.add(ta.shape().get(i).equals(tb.shape().get(i)) ? ta.shape().get(i) : Dim.ANY);
            return new TensorType(dims, ta.dtype());
        }
        if (a instanceof TupleType ta && b instanceof TupleType tb && ta.fields().size() == tb.fields().size()) {
            List<Type> fields = new ArrayList<>();
            for (int i = 0; i < ta.fields().size(); i++) fields.add(join(ta.fields().get(i), tb.fields().get(i)));
            return new TupleType(fields);
        }
        if (a instanceof TypeCall ca && b instanceof TypeCall cb && ca.func().equals(cb.func()) && ca.args().size() == cb.args().size()) {
            List<Type> args = new ArrayList<>();
            for (int i = 0; i < ca.args().size(); i++) args.add(join(ca.args().get(i), cb.args().get(i)));
            return new TypeCall(ca.func(), args);
        }
        throw new RelationException("the branches have different types: " + a + " and " + b);
    }
}
