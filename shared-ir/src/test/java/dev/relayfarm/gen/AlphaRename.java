package dev.relayfarm.gen;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeRelation;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An alpha-renamed copy of a module: every variable and every function type parameter is replaced by
 * a fresh one with a different name ({@code %r17}, {@code R3}), uses follow their binders. Built on
 * {@link ExprRewriter}, so it is iterative and keeps shared sub-expressions shared. ADT definitions
 * are kept as they are (constructors are referenced by name).
 */
final class AlphaRename extends ExprRewriter {
    private final IdentityHashMap<Var, Var> vars = new IdentityHashMap<>();
    private final Map<TypeVar, TypeVar> typeVars = new HashMap<>();

    private AlphaRename() {}

    static IRModule rename(IRModule module) {
        AlphaRename rn = new AlphaRename();
        Map<GlobalVar, Function> fns = new LinkedHashMap<>();
        module.functions().forEach((gv, f) -> fns.put(gv, (Function) rn.rewrite(f)));
        return IRModule.of(fns, module.types());
    }

    /** How many variables were renamed (every variable of the module, each once). */
    static int renamedVariables(IRModule module) {
        AlphaRename rn = new AlphaRename();
        module.functions().values().forEach(rn::rewrite);
        return rn.vars.size();
    }

    @Override
    protected Expr rewrite(Expr pre, Expr post) {
        return switch (post) {
            case Var v -> var(v);
            case Let l -> new Let(var(l.var()), l.value(), l.body(), l.span());
            case Function f -> new Function(f.params().stream().map(this::var).toList(), f.body(), type(f.retType()),
                    f.typeParams().stream().map(this::typeVar).toList(), f.attrs(), f.span());
            case Match m -> new Match(m.data(), m.clauses().stream().map(c -> new Clause(pattern(c.pattern()), c.body())).toList(),
                    m.complete(), m.span());
            case Call c when !c.typeArgs().isEmpty() -> new Call(c.callee(), c.args(), c.attrs(), types(c.typeArgs()), c.span());
            default -> post;
        };
    }

    private Var var(Var v) {
        return vars.computeIfAbsent(v, old -> Var.fresh("r" + vars.size(), type(old.annotation()), old.span()));
    }

    private TypeVar typeVar(TypeVar t) {
        return typeVars.computeIfAbsent(t, old -> TypeVar.fresh("R" + typeVars.size(), old.kind()));
    }

    private Pattern pattern(Pattern p) {
        return switch (p) {
            case Pattern.Wildcard w -> w;
            case Pattern.Bind b -> new Pattern.Bind(var(b.var()));
            case Pattern.Ctor c -> new Pattern.Ctor(c.constructor(), c.args().stream().map(this::pattern).toList());
            case Pattern.TuplePattern t -> new Pattern.TuplePattern(t.fields().stream().map(this::pattern).toList());
        };
    }

    private List<Type> types(List<? extends Type> ts) {
        return ts.stream().map(this::type).toList();
    }

    /** Substitutes renamed type variables; {@code null} (no annotation) stays {@code null}. */
    private Type type(Type t) {
        if (t == null) return null;
        return switch (t) {
            case TensorType tt -> tt;
            case TupleType tt -> new TupleType(types(tt.fields()));
            case FuncType f -> new FuncType(f.typeParams().stream().map(this::typeVar).toList(), types(f.argTypes()), type(f.retType()),
                    f.constraints().stream().map(rel -> new TypeRelation(rel.name(), types(rel.args()), rel.numInputs(), rel.attrs())).toList());
            case TypeVar v -> typeVar(v);
            case GlobalTypeVar g -> g;
            case TypeCall c -> new TypeCall(type(c.func()), types(c.args()));
            case RefType r -> new RefType(type(r.value()));
            case IncompleteType i -> i;
        };
    }
}
