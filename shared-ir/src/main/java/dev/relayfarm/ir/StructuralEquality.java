package dev.relayfarm.ir;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Equality modulo alpha-renaming: binders (let variables, parameters, pattern variables, type
 * parameters) are matched by where they are bound, not by name. Free variables are matched on first
 * sight, consistently in both directions. Iterative: no recursion per expression node.
 *
 * <p>{@link #diff} returns the first mismatch in reading order with the path to it, so a failing
 * round-trip or pass test says where the programs part.
 */
public final class StructuralEquality {
    /** Where two programs part: a path like {@code @main.body.let(%x).value.args[1]} and why. */
    public record Mismatch(String path, String reason, Object lhs, Object rhs) {
        public String message() {
            return "at " + path + ": " + reason + "\n  lhs: " + lhs + "\n  rhs: " + rhs;
        }

        @Override
        public String toString() {
            return message();
        }
    }

    private record Path(Path parent, String label) {
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            ArrayDeque<String> parts = new ArrayDeque<>();
            for (Path p = this; p != null; p = p.parent) parts.push(p.label);
            for (String s : parts) {
                if (!sb.isEmpty() && !s.startsWith("[")) sb.append('.');
                sb.append(s);
            }
            return sb.toString();
        }
    }

    private record Work(Expr lhs, Expr rhs, Path path) {}

    private static final class Found extends RuntimeException {
        final transient Mismatch mismatch;

        Found(Mismatch mismatch) {
            super(null, null, false, false);
            this.mismatch = mismatch;
        }
    }

    private final IdentityHashMap<Var, Var> vars = new IdentityHashMap<>();
    private final IdentityHashMap<Var, Var> varsBack = new IdentityHashMap<>();
    private final Map<Type, Type> typeVars = new HashMap<>();
    private final Map<Type, Type> typeVarsBack = new HashMap<>();
    private final IdentityHashMap<Expr, Expr> proven = new IdentityHashMap<>();

    private StructuralEquality() {}

    public static boolean equal(Expr a, Expr b) {
        return diff(a, b).isEmpty();
    }

    public static boolean equal(IRModule a, IRModule b) {
        return diff(a, b).isEmpty();
    }

    public static boolean equal(Type a, Type b) {
        return new StructuralEquality().typesEqual(a, b);
    }

    public static Optional<Mismatch> diff(Expr a, Expr b) {
        return new StructuralEquality().run(a, b, new Path(null, "expr"));
    }

    public static Optional<Mismatch> diff(IRModule a, IRModule b) {
        Set<String> fa = names(a.functions().keySet().stream().map(GlobalVar::name).toList());
        Set<String> fb = names(b.functions().keySet().stream().map(GlobalVar::name).toList());
        if (!fa.equals(fb)) {
            return Optional.of(new Mismatch("module", "different global functions", fa, fb));
        }
        Set<String> ta = names(a.types().keySet().stream().map(GlobalTypeVar::name).toList());
        Set<String> tb = names(b.types().keySet().stream().map(GlobalTypeVar::name).toList());
        if (!ta.equals(tb)) {
            return Optional.of(new Mismatch("module", "different type definitions", ta, tb));
        }
        for (TypeData da : a.types().values()) {
            TypeData db = b.typeData(da.name()).orElseThrow();
            Optional<Mismatch> m = new StructuralEquality().typeDataDiff(da, db);
            if (m.isPresent()) return m;
        }
        for (Map.Entry<GlobalVar, Function> e : a.functions().entrySet()) {
            Function other = b.functions().get(e.getKey());
            Optional<Mismatch> m = new StructuralEquality().run(e.getValue(), other, new Path(null, "@" + e.getKey().name()));
            if (m.isPresent()) return m;
        }
        return Optional.empty();
    }

    private static Set<String> names(List<String> list) {
        return new HashSet<>(list);
    }

    private Optional<Mismatch> typeDataDiff(TypeData a, TypeData b) {
        Path path = new Path(null, "type " + a.name());
        if (a.typeParams().size() != b.typeParams().size()) {
            return Optional.of(new Mismatch(path.toString(), "different number of type parameters", a.typeParams(), b.typeParams()));
        }
        for (int i = 0; i < a.typeParams().size(); i++) bindType(a.typeParams().get(i), b.typeParams().get(i));
        if (a.constructors().size() != b.constructors().size()) {
            return Optional.of(new Mismatch(path.toString(), "different number of constructors", a.constructors(), b.constructors()));
        }
        for (int i = 0; i < a.constructors().size(); i++) {
            Constructor ca = a.constructors().get(i);
            Constructor cb = b.constructors().get(i);
            if (!ca.name().equals(cb.name()) || ca.inputs().size() != cb.inputs().size()) {
                return Optional.of(new Mismatch(path + ".constructors[" + i + "]", "different constructors", ca, cb));
            }
            for (int j = 0; j < ca.inputs().size(); j++) {
                if (!typesEqual(ca.inputs().get(j), cb.inputs().get(j))) {
                    return Optional.of(new Mismatch(path + "." + ca.name() + "[" + j + "]", "different field types", ca.inputs().get(j), cb.inputs().get(j)));
                }
            }
        }
        return Optional.empty();
    }

    private Optional<Mismatch> run(Expr a, Expr b, Path root) {
        ArrayDeque<Work> stack = new ArrayDeque<>();
        stack.push(new Work(a, b, root));
        try {
            while (!stack.isEmpty()) {
                Work w = stack.pop();
                step(w.lhs, w.rhs, w.path, stack);
            }
        } catch (Found f) {
            return Optional.of(f.mismatch);
        }
        return Optional.empty();
    }

    private static void fail(Path path, String reason, Object lhs, Object rhs) {
        throw new Found(new Mismatch(path.toString(), reason, lhs, rhs));
    }

    /** Pushes children so that the left-most is compared first. */
    private void pushAll(ArrayDeque<Work> stack, List<Expr> as, List<Expr> bs, Path path, String label) {
        for (int i = as.size() - 1; i >= 0; i--) stack.push(new Work(as.get(i), bs.get(i), new Path(path, label + "[" + i + "]")));
    }

    private void step(Expr a, Expr b, Path path, ArrayDeque<Work> stack) {
        if (a == b && !(a instanceof Var) && freeOf(a)) return;
        if (proven.get(a) == b) return;
        if (a.getClass() != b.getClass()) {
            fail(path, "different node kinds: " + a.getClass().getSimpleName() + " vs " + b.getClass().getSimpleName(), a, b);
        }
        proven.put(a, b);
        switch (a) {
            case Var va -> useVar(va, (Var) b, path);
            case GlobalVar ga -> {
                if (!ga.equals(b)) fail(path, "different globals", a, b);
            }
            case Constant ca -> {
                if (!ca.data().contentEquals(((Constant) b).data())) fail(path, "different constant values", ca.data(), ((Constant) b).data());
            }
            case Op oa -> {
                if (!oa.equals(b)) fail(path, "different operators", a, b);
            }
            case Constructor ca -> {
                if (!ca.equals(b)) fail(path, "different constructors", a, b);
            }
            case Tuple ta -> {
                Tuple tb = (Tuple) b;
                if (ta.fields().size() != tb.fields().size()) fail(path, "tuples of different arity: " + ta.fields().size() + " vs " + tb.fields().size(), a, b);
                pushAll(stack, ta.fields(), tb.fields(), path, "fields");
            }
            case TupleGetItem ta -> {
                TupleGetItem tb = (TupleGetItem) b;
                if (ta.index() != tb.index()) fail(path, "different projections: ." + ta.index() + " vs ." + tb.index(), a, b);
                stack.push(new Work(ta.tuple(), tb.tuple(), new Path(path, "tuple")));
            }
            case Let la -> {
                Let lb = (Let) b;
                bindVar(la.var(), lb.var(), path);
                Path here = new Path(path, "let(%" + la.var().name() + ")");
                stack.push(new Work(la.body(), lb.body(), new Path(path, "body")));
                stack.push(new Work(la.value(), lb.value(), new Path(here, "value")));
            }
            case If ia -> {
                If ib = (If) b;
                stack.push(new Work(ia.elseBranch(), ib.elseBranch(), new Path(path, "else")));
                stack.push(new Work(ia.thenBranch(), ib.thenBranch(), new Path(path, "then")));
                stack.push(new Work(ia.cond(), ib.cond(), new Path(path, "cond")));
            }
            case Function fa -> {
                Function fb = (Function) b;
                if (fa.typeParams().size() != fb.typeParams().size()) fail(path, "different number of type parameters", fa.typeParams(), fb.typeParams());
                for (int i = 0; i < fa.typeParams().size(); i++) {
                    if (fa.typeParams().get(i).kind() != fb.typeParams().get(i).kind()) fail(path, "type parameters of different kinds", fa.typeParams(), fb.typeParams());
                    bindType(fa.typeParams().get(i), fb.typeParams().get(i));
                }
                if (fa.params().size() != fb.params().size()) fail(path, "different number of parameters: " + fa.params().size() + " vs " + fb.params().size(), fa.params(), fb.params());
                for (int i = 0; i < fa.params().size(); i++) bindVar(fa.params().get(i), fb.params().get(i), new Path(path, "params[" + i + "]"));
                if (!optionalTypesEqual(fa.retType(), fb.retType())) fail(new Path(path, "retType"), "different return types", fa.retType(), fb.retType());
                if (!fa.attrs().equals(fb.attrs())) fail(new Path(path, "attrs"), "different function attributes", fa.attrs().values(), fb.attrs().values());
                stack.push(new Work(fa.body(), fb.body(), new Path(path, "body")));
            }
            case Call ca -> {
                Call cb = (Call) b;
                if (ca.args().size() != cb.args().size()) fail(path, "different number of arguments: " + ca.args().size() + " vs " + cb.args().size(), a, b);
                if (!ca.attrs().equals(cb.attrs())) fail(new Path(path, "attrs"), "different call attributes", ca.attrs().values(), cb.attrs().values());
                if (!typeListsEqual(ca.typeArgs(), cb.typeArgs())) fail(new Path(path, "typeArgs"), "different type arguments", ca.typeArgs(), cb.typeArgs());
                pushAll(stack, ca.args(), cb.args(), path, "args");
                stack.push(new Work(ca.callee(), cb.callee(), new Path(path, "callee")));
            }
            case Match ma -> {
                Match mb = (Match) b;
                if (ma.complete() != mb.complete()) fail(path, "match vs match?", a, b);
                if (ma.clauses().size() != mb.clauses().size()) fail(path, "different number of clauses", a, b);
                for (int i = ma.clauses().size() - 1; i >= 0; i--) {
                    Path cp = new Path(path, "clauses[" + i + "]");
                    patternsEqual(ma.clauses().get(i).pattern(), mb.clauses().get(i).pattern(), cp);
                    stack.push(new Work(ma.clauses().get(i).body(), mb.clauses().get(i).body(), new Path(cp, "body")));
                }
                stack.push(new Work(ma.data(), mb.data(), new Path(path, "data")));
            }
            case RefCreate ra -> stack.push(new Work(ra.value(), ((RefCreate) b).value(), new Path(path, "value")));
            case RefRead ra -> stack.push(new Work(ra.ref(), ((RefRead) b).ref(), new Path(path, "ref")));
            case RefWrite ra -> {
                RefWrite rb = (RefWrite) b;
                stack.push(new Work(ra.value(), rb.value(), new Path(path, "value")));
                stack.push(new Work(ra.ref(), rb.ref(), new Path(path, "ref")));
            }
        }
    }

    /** Identical leaves without variables are trivially equal; anything else must be walked for binders. */
    private static boolean freeOf(Expr e) {
        return e instanceof GlobalVar || e instanceof Constant || e instanceof Op || e instanceof Constructor;
    }

    private void patternsEqual(Pattern a, Pattern b, Path path) {
        if (a.getClass() != b.getClass()) fail(path, "different pattern kinds", a, b);
        switch (a) {
            case Pattern.Wildcard w -> {}
            case Pattern.Bind ba -> bindVar(ba.var(), ((Pattern.Bind) b).var(), path);
            case Pattern.Ctor ca -> {
                Pattern.Ctor cb = (Pattern.Ctor) b;
                if (!ca.constructor().equals(cb.constructor()) || ca.args().size() != cb.args().size()) fail(path, "different constructor patterns", a, b);
                for (int i = 0; i < ca.args().size(); i++) patternsEqual(ca.args().get(i), cb.args().get(i), new Path(path, "[" + i + "]"));
            }
            case Pattern.TuplePattern ta -> {
                Pattern.TuplePattern tb = (Pattern.TuplePattern) b;
                if (ta.fields().size() != tb.fields().size()) fail(path, "tuple patterns of different arity", a, b);
                for (int i = 0; i < ta.fields().size(); i++) patternsEqual(ta.fields().get(i), tb.fields().get(i), new Path(path, "[" + i + "]"));
            }
        }
    }

    private void bindVar(Var a, Var b, Path path) {
        Var prev = vars.get(a);
        Var prevBack = varsBack.get(b);
        if ((prev != null && prev != b) || (prevBack != null && prevBack != a)) {
            fail(path, "variable bound inconsistently", a, b);
        }
        vars.put(a, b);
        varsBack.put(b, a);
        if (!optionalTypesEqual(a.annotation(), b.annotation())) {
            fail(path, "different annotations on %" + a.name(), a.annotation(), b.annotation());
        }
    }

    private void useVar(Var a, Var b, Path path) {
        Var mapped = vars.get(a);
        if (mapped != null) {
            if (mapped != b) fail(path, "different variables: %" + a.name() + " refers to another binding than %" + b.name(), a, b);
            return;
        }
        if (varsBack.containsKey(b)) fail(path, "different variables: %" + a.name() + " is free but %" + b.name() + " is bound", a, b);
        bindVar(a, b, path); // free variable: matched on first sight
    }

    private void bindType(Type a, Type b) {
        typeVars.put(a, b);
        typeVarsBack.put(b, a);
    }

    private boolean optionalTypesEqual(Type a, Type b) {
        if (a == null || b == null) return a == b;
        return typesEqual(a, b);
    }

    private boolean typeListsEqual(List<? extends Type> a, List<? extends Type> b) {
        if (a.size() != b.size()) return false;
        for (int i = 0; i < a.size(); i++) if (!typesEqual(a.get(i), b.get(i))) return false;
        return true;
    }

    /** Types are shallow, so plain recursion is fine here. */
    private boolean typesEqual(Type a, Type b) {
        if (a.getClass() != b.getClass()) return false;
        return switch (a) {
            case TensorType ta -> ta.equals(b);
            case TupleType ta -> typeListsEqual(ta.fields(), ((TupleType) b).fields());
            case FuncType fa -> {
                FuncType fb = (FuncType) b;
                if (fa.typeParams().size() != fb.typeParams().size() || fa.constraints().size() != fb.constraints().size()) yield false;
                for (int i = 0; i < fa.typeParams().size(); i++) bindType(fa.typeParams().get(i), fb.typeParams().get(i));
                if (!typeListsEqual(fa.argTypes(), fb.argTypes()) || !typesEqual(fa.retType(), fb.retType())) yield false;
                for (int i = 0; i < fa.constraints().size(); i++) {
                    TypeRelation ra = fa.constraints().get(i);
                    TypeRelation rb = fb.constraints().get(i);
                    if (!ra.name().equals(rb.name()) || ra.numInputs() != rb.numInputs() || !ra.attrs().equals(rb.attrs())
                            || !typeListsEqual(ra.args(), rb.args())) yield false;
                }
                yield true;
            }
            case TypeVar va -> varTypeEqual(va, b);
            case IncompleteType ia -> varTypeEqual(ia, b);
            case GlobalTypeVar ga -> ga.equals(b);
            case TypeCall ca -> typesEqual(ca.func(), ((TypeCall) b).func()) && typeListsEqual(ca.args(), ((TypeCall) b).args());
            case RefType ra -> typesEqual(ra.value(), ((RefType) b).value());
        };
    }

    private boolean varTypeEqual(Type a, Type b) {
        Type mapped = typeVars.get(a);
        if (mapped != null) return mapped.equals(b);
        if (typeVarsBack.containsKey(b)) return false;
        if (a instanceof TypeVar ta && b instanceof TypeVar tb && (ta.kind() != tb.kind())) return false;
        bindType(a, b); // free type variable: matched on first sight
        return Objects.equals(a.getClass(), b.getClass());
    }
}
