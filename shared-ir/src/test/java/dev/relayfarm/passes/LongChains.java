package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Builds {@code @main} programs with a 100,000-step chain, as nested dataflow
 * ({@code f(f(f(%x)))}) or as a let chain ({@code let %v1 = f(%x); let %v2 = f(%v1); ...}), for the
 * "no stack overflow" test every pass has. Built as IR: the text would be a 100k-line file.
 */
final class LongChains {
    static final int LENGTH = 100_000;

    private LongChains() {}

    /** {@code def @main(x) { tail(step(...step(x))) }}, the steps let-bound when {@code lets}. */
    static IRModule chain(boolean lets, Var x, UnaryOperator<Expr> step, UnaryOperator<Expr> tail) {
        Expr cur = x;
        List<Var> vars = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        for (int i = 0; i < LENGTH; i++) {
            Expr next = step.apply(cur);
            if (lets) {
                Var v = Var.fresh("v" + i);
                vars.add(v);
                values.add(next);
                cur = v;
            } else {
                cur = next;
            }
        }
        Expr body = tail.apply(cur);
        for (int i = vars.size() - 1; i >= 0; i--) body = new Let(vars.get(i), values.get(i), body);
        return IRModule.fromMain(new Function(List.of(x), body));
    }

    /**
     * Runs {@code pass} (typing before and after) without the debug validation of
     * {@link PassAssert#run}, whose well-formedness walk would dominate the time of these tests.
     */
    static PassResult run(Pass pass, IRModule module) {
        return new Sequential("long-chain", List.of(pass)).run(module, new PassContext(PassOptions.level(3)));
    }

    /** The body of {@code @main} after its let bindings. */
    static Expr afterLets(IRModule m) {
        Expr e = m.main().orElseThrow().body();
        while (e instanceof Let l) e = l.body();
        return e;
    }
}
