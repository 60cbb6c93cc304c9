package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.List;

/**
 * Eta-expansion of global functions and constructors used as values (not called): {@code @f}
 * becomes {@code fn (%x1, ...) { @f(%x1, ...) }} and {@code Cons} becomes
 * {@code fn (%x1, %x2) { Cons(%x1, %x2) }}, so later passes see every first-class function as a
 * function literal. A callee position is left alone (there is nothing to expand), and so is a
 * nullary constructor written without a call ({@code Nil} is the value itself here).
 *
 * <pre>
 * def @main(%x) { let %g = @f; %g(%x) }   ==>   def @main(%x) { let %g = fn (%a) { @f(%a) }; %g(%x) }
 * </pre>
 *
 * {@link Options}: TVM's {@code expand_constructor} / {@code expand_global_var}. TVM's Python API
 * defaults both to false (a no-op); the registered instance expands both, so that
 * {@code relayc opt --passes eta-expand} does something. Parameters are annotated with the global's
 * checked parameter types, or the constructor's input types; for a polymorphic ADT the constructor's
 * parameters are left unannotated (inferred at the use). Not done: a polymorphic global used as a
 * value is left as it is (its expansion would need type parameters of its own); primitive functions
 * are not entered.
 */
public final class EtaExpand extends FunctionPass {
    public record Options(boolean expandConstructors, boolean expandGlobalVars) {
        public static final Options DEFAULT = new Options(true, true);
    }

    private static final PassInfo INFO = new PassInfo("eta-expand", 1,
            "wraps globals and constructors used as values in function literals that call them");

    private final Options options;

    public EtaExpand() {
        this(Options.DEFAULT);
    }

    public EtaExpand(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function f, IRModule module, PassContext context) {
        InferResult types = context.types();
        return f.withBody(expandLeaf(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                // Each value position gets its own expansion: one node could not have two types.
                if (post instanceof Call c) {
                    List<Expr> args = new ArrayList<>(c.args().size());
                    boolean changed = false;
                    for (Expr a : c.args()) {
                        Expr x = expandLeaf(a, module, types);
                        changed |= x != a;
                        args.add(x);
                    }
                    return changed ? new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span()) : c;
                }
                return ExprRewriter.withChildren(post, x -> expandLeaf(x, module, types));
            }
        }.rewrite(f.body()), module, types));
    }

    private Expr expandLeaf(Expr e, IRModule module, InferResult types) {
        if (e instanceof GlobalVar g && options.expandGlobalVars()) {
            Function target = module.functions().get(g);
            if (target == null || target.isPrimitive()) return e;
            FuncType t = types.typeOf(g);
            if (!t.typeParams().isEmpty()) return e;
            return wrap(e, t.argTypes(), t.retType());
        }
        if (e instanceof Constructor c && options.expandConstructors() && !c.inputs().isEmpty()) {
            TypeData td = module.types().get(c.belongsTo());
            boolean mono = td != null && td.typeParams().isEmpty();
            List<Type> params = new ArrayList<>();
            for (Type in : c.inputs()) params.add(mono ? in : null);
            return wrap(e, params, mono ? td.header() : null);
        }
        return e;
    }

    private static Function wrap(Expr callee, List<Type> paramTypes, Type ret) {
        List<Var> params = new ArrayList<>();
        for (int i = 0; i < paramTypes.size(); i++) params.add(Var.fresh("x" + i, paramTypes.get(i)));
        return new Function(params, new Call(callee, List.copyOf(params)), ret);
    }
}
