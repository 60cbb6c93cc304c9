package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lambda lifting (closure conversion TVM's way): every nested non-primitive function becomes a
 * global. Without free variables the global is the function itself and the literal becomes a
 * reference to it. With free variables the global takes the captured values and returns the inner
 * function (marked {@code Closure=1}), and the literal becomes a call building the closure:
 *
 * <pre>
 * def @main(%x) { let %f = fn (%y) { add(%x, %y) }; %f(%x) }
 *   ==>  def @main_lifted_0(%x1) { fn (%y, Closure=1) { add(%x1, %y) } }
 *        def @main(%x) { let %f = @main_lifted_0(%x); %f(%x) }
 * </pre>
 *
 * Chosen over extra parameters because a lifted function may escape as a value; partial application
 * keeps every use as it was. A recursive let-bound function ({@code let %f = fn ... %f ...}) refers
 * to itself through its global: {@code %f} inside becomes {@code @g(captured...)} (or {@code @g}).
 * Inner functions are lifted first, so an outer function captures what its inner ones captured.
 * Lifted parameters are annotated with their checked types and binders are fresh (one variable is
 * never bound twice). A global's own body marked {@code Closure=1} is the result of an earlier run
 * and is not lifted again, so the pass is idempotent.
 *
 * <p>Not done: functions inside a polymorphic global, and polymorphic local functions, stay where
 * they are (their types mention type variables bound outside them); primitive (fused) functions
 * stay inline, as in TVM.
 */
public final class LambdaLift implements Pass {
    public static final String CLOSURE = "Closure";
    private static final PassInfo INFO = new PassInfo("lambda-lift", 0,
            "turns nested functions into globals; captured variables become a closure-building call");

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        InferResult types = context.types();
        Map<GlobalVar, Function> lifted = new LinkedHashMap<>();
        Map<GlobalVar, Function> rewritten = new LinkedHashMap<>();
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            Function f = e.getValue();
            if (f.isPrimitive() || !f.typeParams().isEmpty()) continue;
            Function g = f.withBody(lift(e.getKey(), f, module, types, lifted));
            if (g != f) rewritten.put(e.getKey(), g);
        }
        if (lifted.isEmpty()) return PassResult.unchanged(module);
        IRModule out = module;
        for (Map.Entry<GlobalVar, Function> e : rewritten.entrySet()) out = out.withFunction(e.getKey(), e.getValue());
        for (Map.Entry<GlobalVar, Function> e : lifted.entrySet()) out = out.withFunction(e.getKey(), e.getValue());
        return PassResult.of(module, out);
    }

    private static boolean isClosure(Function f) {
        return f.attrs().get(CLOSURE).map(v -> v instanceof AttrValue.IntValue(long i) && i != 0).orElse(false);
    }

    private static Expr lift(GlobalVar owner, Function global, IRModule module, InferResult types, Map<GlobalVar, Function> lifted) {
        Map<Function, Var> recursive = new IdentityHashMap<>();
        for (Expr n : ExprTraversal.postOrder(global.body())) {
            if (n instanceof Let l && l.value() instanceof Function fn) recursive.put(fn, l.var());
        }
        Expr keep = global.body() instanceof Function top && isClosure(top) ? top : null;
        return new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(pre instanceof Function fn) || pre == keep || fn.isPrimitive() || !fn.typeParams().isEmpty()) return post;
                Function inner = (Function) post;
                Var self = recursive.get(fn);
                List<Var> captured = new ArrayList<>(FreeVars.of(inner));
                captured.remove(self);
                GlobalVar name = freshName(owner, module, lifted);
                Map<Var, Expr> subst = new IdentityHashMap<>();
                List<Var> caps = new ArrayList<>();
                for (Var c : captured) {
                    Var fresh = Var.fresh(c.name(), c.hasAnnotation() ? c.annotation() : types.typeOf(c));
                    caps.add(fresh);
                    subst.put(c, fresh);
                }
                if (self != null) subst.put(self, captured.isEmpty() ? name : new Call(name, List.copyOf(caps)));
                FuncType ft = (FuncType) types.typeOf(fn);
                List<Var> params = new ArrayList<>();
                for (int i = 0; i < inner.params().size(); i++) {
                    Var p = inner.params().get(i);
                    Var fresh = Var.fresh(p.name(), p.hasAnnotation() ? p.annotation() : ft.argTypes().get(i));
                    params.add(fresh);
                    subst.put(p, fresh);
                }
                Type ret = inner.retType() != null ? inner.retType() : ft.retType();
                Expr body = Subst.copy(inner.body(), subst);
                if (captured.isEmpty()) {
                    lifted.put(name, new Function(params, body, ret, List.of(), inner.attrs(), inner.span()));
                    return name;
                }
                Function closure = new Function(params, body, ret, List.of(), inner.attrs().with(CLOSURE, new AttrValue.IntValue(1)), inner.span());
                lifted.put(name, new Function(caps, closure, null, List.of(), Attrs.EMPTY, inner.span()));
                return new Call(name, List.copyOf(captured));
            }
        }.rewrite(global.body());
    }

    private static GlobalVar freshName(GlobalVar owner, IRModule module, Map<GlobalVar, Function> lifted) {
        for (int i = 0; ; i++) {
            GlobalVar g = new GlobalVar(owner.name() + "_lifted_" + i);
            if (!module.functions().containsKey(g) && !lifted.containsKey(g)) return g;
        }
    }
}
