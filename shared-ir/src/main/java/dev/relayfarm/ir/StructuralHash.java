package dev.relayfarm.ir;

import java.util.IdentityHashMap;
import java.util.List;

/**
 * A hash consistent with {@link StructuralEquality}: structurally equal programs hash alike.
 * Context-free by design — a variable hashes by its type annotation, never by name or identity —
 * so each node's hash depends only on its subtree and is computed once per node in post-order,
 * without recursion and in linear time even for heavily shared DAGs.
 */
public final class StructuralHash {
    private final IdentityHashMap<Expr, Integer> memo = new IdentityHashMap<>();

    private StructuralHash() {}

    public static int hash(Expr e) {
        return new StructuralHash().of(e);
    }

    public static int hash(IRModule m) {
        StructuralHash h = new StructuralHash();
        int acc = 17;
        // Order-insensitive over globals, as equality is.
        for (var e : m.functions().entrySet()) acc += e.getKey().name().hashCode() * 31 + h.of(e.getValue());
        for (TypeData td : m.types().values()) {
            int t = td.name().hashCode() * 31 + td.typeParams().size();
            for (Constructor c : td.constructors()) t = t * 31 + c.name().hashCode() * 7 + typeHash(c.inputs());
            acc += t;
        }
        return acc;
    }

    private int of(Expr root) {
        for (Expr e : ExprTraversal.postOrder(root)) {
            if (!memo.containsKey(e)) memo.put(e, node(e));
        }
        return memo.get(root);
    }

    private int child(Expr e) {
        return memo.get(e);
    }

    private int children(List<Expr> es) {
        int h = 1;
        for (Expr e : es) h = h * 31 + child(e);
        return h;
    }

    private int node(Expr e) {
        int kind = e.getClass().getSimpleName().hashCode();
        int body = switch (e) {
            case Var v -> optType(v.annotation());
            case GlobalVar g -> g.name().hashCode();
            case Constant c -> c.data().contentHash();
            case Op o -> o.name().hashCode();
            case Constructor c -> c.hashCode();
            case Tuple t -> children(t.fields());
            case TupleGetItem t -> child(t.tuple()) * 31 + t.index();
            case Let l -> (optType(l.var().annotation()) * 31 + child(l.value())) * 31 + child(l.body());
            case If i -> children(List.of(i.cond(), i.thenBranch(), i.elseBranch()));
            case Function f -> {
                int h = f.typeParams().size();
                for (Var p : f.params()) h = h * 31 + optType(p.annotation());
                yield ((h * 31 + optType(f.retType())) * 31 + f.attrs().hashCode()) * 31 + child(f.body());
            }
            case Call c -> ((child(c.callee()) * 31 + children(c.args())) * 31 + c.attrs().hashCode()) * 31 + typeHash(c.typeArgs());
            case Match m -> {
                int h = child(m.data()) * 2 + (m.complete() ? 1 : 0);
                for (Clause cl : m.clauses()) h = (h * 31 + patternHash(cl.pattern())) * 31 + child(cl.body());
                yield h;
            }
            case RefCreate r -> child(r.value());
            case RefRead r -> child(r.ref());
            case RefWrite r -> child(r.ref()) * 31 + child(r.value());
        };
        return kind * 31 + body;
    }

    private static int patternHash(Pattern p) {
        return switch (p) {
            case Pattern.Wildcard w -> 1;
            case Pattern.Bind b -> 2 * 31 + optType(b.var().annotation());
            case Pattern.Ctor c -> {
                int h = c.constructor().hashCode();
                for (Pattern a : c.args()) h = h * 31 + patternHash(a);
                yield h;
            }
            case Pattern.TuplePattern t -> {
                int h = 3;
                for (Pattern a : t.fields()) h = h * 31 + patternHash(a);
                yield h;
            }
        };
    }

    private static int optType(Type t) {
        return t == null ? 0 : typeHash(t);
    }

    private static int typeHash(List<? extends Type> ts) {
        int h = 1;
        for (Type t : ts) h = h * 31 + typeHash(t);
        return h;
    }

    /** Alpha-invariant: type variables hash by kind only. */
    static int typeHash(Type t) {
        return switch (t) {
            case TensorType tt -> tt.hashCode();
            case TupleType tt -> 3 + typeHash(tt.fields());
            case FuncType f -> (f.typeParams().size() * 31 + typeHash(f.argTypes())) * 31 + typeHash(f.retType());
            case TypeVar v -> v.kind().hashCode();
            case IncompleteType i -> 5;
            case GlobalTypeVar g -> g.hashCode();
            case TypeCall c -> typeHash(c.func()) * 31 + typeHash(c.args());
            case RefType r -> 7 + typeHash(r.value());
        };
    }
}
