package dev.relayfarm.gen;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Names the features a module exercises ("expr:Match", "dtype:bfloat16", "let-shadowing",
 * "mutual-recursion", ...), so a test can assert that the generator reaches all of them. Only for
 * the small random modules: it recurses per node.
 */
final class Coverage {
    private final Set<String> features = new TreeSet<>();
    private final Set<Expr> visited = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<String> scopeNames = new ArrayList<>();
    private final Map<String, Set<String>> callGraph = new HashMap<>();
    private String current;

    static Set<String> of(IRModule m) {
        Coverage c = new Coverage();
        c.module(m);
        return c.features;
    }

    private void module(IRModule m) {
        for (TypeData td : m.types().values()) {
            features.add(td.typeParams().isEmpty() ? "adt" : "adt-with-type-params");
            td.constructors().forEach(c -> c.inputs().forEach(this::type));
        }
        for (Map.Entry<GlobalVar, Function> e : m.functions().entrySet()) {
            current = e.getKey().name();
            callGraph.put(current, new HashSet<>());
            expr(e.getValue());
        }
        callGraph.forEach((f, callees) -> {
            if (callees.contains(f)) features.add("self-recursion");
            for (String g : callees) if (!g.equals(f) && callGraph.getOrDefault(g, Set.of()).contains(f)) features.add("mutual-recursion");
        });
    }

    private void expr(Expr e) {
        if (!visited.add(e)) {
            if (!(e instanceof Var) && !(e instanceof GlobalVar)) features.add("dag-sharing");
            return;
        }
        features.add("expr:" + e.getClass().getSimpleName());
        switch (e) {
            case Var v -> {}
            case Constant c -> {
                features.add("dtype:" + c.data().dtype());
                features.add(c.data().rank() == 0 ? "constant-scalar" : "constant-tensor");
                if (c.data().dtype().lanes() > 1) features.add("constant-lanes");
            }
            case Let l -> {
                binder(l.var());
                if (l.value() instanceof Function) {
                    features.add("let-function");
                    scopeNames.add(l.var().name());
                    expr(l.value());
                } else {
                    expr(l.value());
                    scopeNames.add(l.var().name());
                }
                expr(l.body());
                scopeNames.removeLast();
            }
            case Function f -> {
                if (!f.typeParams().isEmpty()) features.add("function-type-params");
                if (f.isPrimitive()) features.add("function-primitive");
                attrs(f.attrs());
                if (f.retType() != null) type(f.retType());
                f.params().forEach(this::binder);
                f.params().forEach(p -> scopeNames.add(p.name()));
                expr(f.body());
                for (int i = 0; i < f.params().size(); i++) scopeNames.removeLast();
            }
            case Call c -> {
                features.add("call:" + c.callee().getClass().getSimpleName());
                if (c.callee() instanceof GlobalVar g) callGraph.get(current).add(g.name());
                if (!c.typeArgs().isEmpty()) features.add("call-type-args");
                c.typeArgs().forEach(this::type);
                attrs(c.attrs());
                e.children().forEach(this::expr);
            }
            case Match m -> {
                features.add(m.complete() ? "match" : "match?");
                expr(m.data());
                for (Clause cl : m.clauses()) {
                    List<Var> bound = new ArrayList<>();
                    pattern(cl.pattern(), bound);
                    bound.forEach(this::binder);
                    bound.forEach(v -> scopeNames.add(v.name()));
                    expr(cl.body());
                    for (int i = 0; i < bound.size(); i++) scopeNames.removeLast();
                }
            }
            default -> e.children().forEach(this::expr);
        }
    }

    private void binder(Var v) {
        features.add(v.hasAnnotation() ? "var-annotated" : "var-unannotated");
        if (scopeNames.contains(v.name())) features.add("var-shadowing");
        if (v.annotation() != null) type(v.annotation());
    }

    private void pattern(Pattern p, List<Var> bound) {
        features.add("pattern:" + p.getClass().getSimpleName());
        switch (p) {
            case Pattern.Wildcard w -> {}
            case Pattern.Bind b -> bound.add(b.var());
            case Pattern.Ctor c -> c.args().forEach(a -> pattern(a, bound));
            case Pattern.TuplePattern t -> t.fields().forEach(f -> pattern(f, bound));
        }
    }

    private void attrs(Attrs attrs) {
        attrs.values().values().forEach(this::attr);
    }

    private void attr(AttrValue v) {
        features.add("attr:" + v.getClass().getSimpleName());
        if (v instanceof AttrValue.ListValue(List<AttrValue> vs)) {
            if (vs.stream().anyMatch(x -> x instanceof AttrValue.ListValue)) features.add("attr:nested-list");
            vs.forEach(this::attr);
        }
    }

    private void type(Type t) {
        features.add("type:" + t.getClass().getSimpleName());
        switch (t) {
            case TensorType tt -> tt.shape().forEach(d -> features.add("dim:" + d.getClass().getSimpleName()));
            case TupleType tt -> {
                if (tt.fields().isEmpty()) features.add("type:unit");
                tt.fields().forEach(this::type);
            }
            case FuncType f -> {
                f.argTypes().forEach(this::type);
                type(f.retType());
            }
            case TypeCall c -> c.args().forEach(this::type);
            case RefType r -> type(r.value());
            default -> {}
        }
    }

    static Set<String> expectedDims() {
        Set<String> s = new TreeSet<>();
        for (Class<?> c : Dim.class.getPermittedSubclasses()) s.add("dim:" + c.getSimpleName());
        return s;
    }
}
