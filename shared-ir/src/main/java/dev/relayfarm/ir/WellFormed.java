package dev.relayfarm.ir;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks scoping: the rules every module must keep (the text round-trip generator and the pass manager's debug check rely on them): every variable use is inside its binder's
 * scope, no variable is bound twice, type variables are bound, and referenced globals, ADTs and
 * constructors exist with matching arity. Iterative over expressions (explicit work stack), so it
 * also runs on the 100,000-node chains; types are shallow and checked recursively.
 */
public final class WellFormed {
    private sealed interface Task {}

    private record Visit(Expr e) implements Task {}

    private record Bind(List<Var> vars) implements Task {}

    private record Unbind(List<Var> vars) implements Task {}

    private record BindTypes(List<TypeVar> vars) implements Task {}

    private record UnbindTypes(List<TypeVar> vars) implements Task {}

    private final IRModule module;
    private final List<String> problems = new ArrayList<>();
    private final IdentityHashMap<Var, Integer> inScope = new IdentityHashMap<>();
    private final Set<Var> everBound = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Expr> walked = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<TypeVar, Integer> typesInScope = new HashMap<>();
    private String where = "";

    private WellFormed(IRModule module) {
        this.module = module;
    }

    /** Every scoping problem found, each naming the global and the offending node; empty when well-formed. */
    public static List<String> problems(IRModule module) {
        WellFormed wf = new WellFormed(module);
        wf.run();
        return wf.problems;
    }

    private void run() {
        for (TypeData td : module.types().values()) {
            where = "type " + td.name();
            push(td.typeParams());
            for (int i = 0; i < td.constructors().size(); i++) {
                Constructor c = td.constructors().get(i);
                if (c.tag() != i || !c.belongsTo().equals(td.header())) problem("constructor " + c.name() + " has tag " + c.tag() + " of " + c.belongsTo() + ", expected " + i + " of " + td.header());
                for (Type t : c.inputs()) type(t);
            }
            pop(td.typeParams());
        }
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            where = "@" + e.getKey().name();
            walk(e.getValue());
            if (!inScope.isEmpty() || !typesInScope.isEmpty()) problem("scope not empty after the function: " + inScope.keySet() + " " + typesInScope.keySet());
        }
    }

    private void problem(String message) {
        problems.add(where + ": " + message);
    }

    private void walk(Expr root) {
        ArrayDeque<Task> stack = new ArrayDeque<>();
        stack.push(new Visit(root));
        while (!stack.isEmpty()) {
            switch (stack.pop()) {
                case Visit(Expr e) -> visit(e, stack);
                case Bind(List<Var> vars) -> {
                    for (Var v : vars) {
                        if (!everBound.add(v)) problem("%" + v.name() + " (id " + v.id() + ") is bound twice");
                        if (v.annotation() != null) type(v.annotation());
                        inScope.merge(v, 1, Integer::sum);
                    }
                }
                case Unbind(List<Var> vars) -> {
                    for (Var v : vars) inScope.remove(v);
                }
                case BindTypes(List<TypeVar> vars) -> push(vars);
                case UnbindTypes(List<TypeVar> vars) -> pop(vars);
            }
        }
    }

    private void visit(Expr e, ArrayDeque<Task> stack) {
        // A node shared by several parents (a dataflow DAG, e.g. a fused group's call used twice)
        // is one node: it is walked once, as TVM's checker does. Walking it again would report the
        // binders inside it as bound twice and take exponential time on chains of diamonds.
        // Variable uses are still checked at every occurrence.
        if (!(e instanceof Var) && !e.children().isEmpty() && !walked.add(e)) return;
        switch (e) {
            case Var v -> {
                if (!inScope.containsKey(v)) problem("%" + v.name() + " (id " + v.id() + ") used outside its binder's scope");
            }
            case GlobalVar g -> {
                if (!module.functions().containsKey(g)) problem("unknown global " + g);
            }
            case Constructor c -> constructor(c);
            case Constant c -> {}
            case Op o -> {}
            case Let l -> {
                stack.push(new Unbind(List.of(l.var())));
                stack.push(new Visit(l.body()));
                if (l.value() instanceof Function) {
                    // A let-bound function sees its own variable (recursion).
                    stack.push(new Visit(l.value()));
                    stack.push(new Bind(List.of(l.var())));
                } else {
                    stack.push(new Bind(List.of(l.var())));
                    stack.push(new Visit(l.value()));
                }
            }
            case Function f -> {
                if (f.typeParams().stream().map(TypeVar::name).distinct().count() != f.typeParams().size()) problem("type parameters with the same name: " + f.typeParams());
                stack.push(new UnbindTypes(f.typeParams()));
                stack.push(new Unbind(f.params()));
                stack.push(new Visit(f.body()));
                stack.push(new Bind(f.params()));
                if (f.retType() != null) {
                    // Checked under the type parameters: bind, check, and leave them for the params/body.
                    push(f.typeParams());
                    type(f.retType());
                    pop(f.typeParams());
                }
                stack.push(new BindTypes(f.typeParams()));
            }
            case Call c -> {
                for (Type t : c.typeArgs()) type(t);
                pushChildren(c, stack);
            }
            case Match m -> {
                for (int i = m.clauses().size() - 1; i >= 0; i--) {
                    Clause cl = m.clauses().get(i);
                    List<Var> bound = new ArrayList<>();
                    pattern(cl.pattern(), bound);
                    stack.push(new Unbind(bound));
                    stack.push(new Visit(cl.body()));
                    stack.push(new Bind(bound));
                }
                stack.push(new Visit(m.data()));
            }
            case Tuple t -> pushChildren(t, stack);
            case TupleGetItem t -> pushChildren(t, stack);
            case If i -> pushChildren(i, stack);
            case RefCreate rc -> pushChildren(rc, stack);
            case RefRead rr -> pushChildren(rr, stack);
            case RefWrite rw -> pushChildren(rw, stack);
        }
    }

    private static void pushChildren(Expr e, ArrayDeque<Task> stack) {
        List<Expr> kids = e.children();
        for (int i = kids.size() - 1; i >= 0; i--) stack.push(new Visit(kids.get(i)));
    }

    private void constructor(Constructor c) {
        TypeData td = module.types().get(c.belongsTo());
        if (td == null) {
            problem("constructor " + c.name() + " of unknown ADT " + c.belongsTo());
        } else if (c.tag() < 0 || c.tag() >= td.constructors().size() || !td.constructors().get(c.tag()).equals(c)
                || !td.constructors().get(c.tag()).inputs().equals(c.inputs())) {
            problem("constructor " + c.name() + " (tag " + c.tag() + ") is not the one defined in " + td.name());
        }
    }

    private void pattern(Pattern p, List<Var> bound) {
        switch (p) {
            case Pattern.Wildcard w -> {}
            case Pattern.Bind b -> {
                for (Var v : bound) if (v.name().equals(b.var().name())) problem("pattern binds %" + v.name() + " twice");
                bound.add(b.var());
            }
            case Pattern.Ctor c -> {
                constructor(c.constructor());
                if (c.args().size() != c.constructor().inputs().size()) problem("pattern " + c.constructor().name() + " has " + c.args().size() + " fields, expected " + c.constructor().inputs().size());
                for (Pattern a : c.args()) pattern(a, bound);
            }
            case Pattern.TuplePattern t -> {
                for (Pattern f : t.fields()) pattern(f, bound);
            }
        }
    }

    private void push(List<TypeVar> vars) {
        for (TypeVar v : vars) typesInScope.merge(v, 1, Integer::sum);
    }

    private void pop(List<TypeVar> vars) {
        for (TypeVar v : vars) typesInScope.computeIfPresent(v, (k, n) -> n == 1 ? null : n - 1);
    }

    private void type(Type t) {
        switch (t) {
            case TensorType tt -> {}
            case TupleType tt -> tt.fields().forEach(this::type);
            case FuncType f -> {
                push(f.typeParams());
                f.argTypes().forEach(this::type);
                type(f.retType());
                for (TypeRelation rel : f.constraints()) rel.args().forEach(this::type);
                pop(f.typeParams());
            }
            case TypeVar v -> {
                if (!typesInScope.containsKey(v)) problem("type variable " + v.name() + " (id " + v.id() + ") is not bound");
            }
            case GlobalTypeVar g -> {
                TypeData td = module.types().get(g);
                if (td == null) problem("unknown ADT " + g.name());
                else if (!td.typeParams().isEmpty()) problem("ADT " + g.name() + " used without its " + td.typeParams().size() + " type arguments");
            }
            case TypeCall c -> {
                TypeData td = c.func() instanceof GlobalTypeVar g ? module.types().get(g) : null;
                if (td == null) problem("type call of unknown ADT " + c.func());
                else if (td.typeParams().size() != c.args().size()) problem("ADT " + td.name() + " applied to " + c.args().size() + " type arguments, expected " + td.typeParams().size());
                c.args().forEach(this::type);
            }
            case RefType rt -> type(rt.value());
            case IncompleteType i -> {}
        }
    }
}
