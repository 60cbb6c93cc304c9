package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Graph normal form: let bindings of pure values are dissolved back into the dataflow graph; every
 * use of the variable becomes the (one, shared) value node, so a value used twice is one node with
 * two parents, still computed once per evaluation of its function body.
 *
 * <pre>
 * fn (%x) { let %a = exp(%x); let %b = add(%a, %a); %b }   ==>   fn (%x) { %0 = exp(%x); add(%0, %0) }
 * </pre>
 *
 * Kept: a let whose value may have an effect ({@link Purity}: reference operations, calls of unknown
 * or impure functions), since the let is what fixes when the effect happens; and a let binding a
 * recursive function (its variable is used inside its own value, so it has no value to substitute).
 * An unused pure binding disappears (its value has no use left). Not done: a value bound outside a
 * nested function and used inside it becomes part of that function's graph, so the interpreter
 * computes it per call, as in TVM.
 */
public final class ToGraphNormalForm implements Pass {
    private static final PassInfo INFO = new PassInfo("to-graph-normal-form", 1,
            "substitutes let-bound pure values into their uses (dataflow sharing instead of lets)");

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        Purity purity = Purity.of(module);
        return PassResult.of(module, FunctionPass.mapFunctions(module, (g, f) -> f.withBody(rewrite(f.body(), purity))));
    }

    static Expr rewrite(Expr body, Purity purity) {
        Map<Var, Let> dissolved = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(body)) {
            if (e instanceof Let l && purity.isPure(l.value()) && !recursive(l)) dissolved.put(l.var(), l);
        }
        if (dissolved.isEmpty()) return body;
        Map<Expr, Expr> done = new IdentityHashMap<>();
        return new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                Expr out = post;
                // The value comes before the body in post-order, so it is rewritten before any use.
                if (pre instanceof Var v && dissolved.containsKey(v)) out = done.get(dissolved.get(v).value());
                else if (pre instanceof Let l && dissolved.containsKey(l.var())) out = ((Let) post).body();
                done.put(pre, out);
                return out;
            }
        }.rewrite(body);
    }

    private static boolean recursive(Let l) {
        if (!(l.value() instanceof Function fn)) return false;
        for (Expr e : ExprTraversal.postOrder(fn)) {
            if (e == l.var()) return true;
        }
        return false;
    }
}
