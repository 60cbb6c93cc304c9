package dev.relayfarm.ad;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;

/** The bindings of one scope as the AD transformations emit them, wrapped around the scope's result in order. */
final class Bindings {
    private final List<Var> vars = new ArrayList<>();
    private final List<Expr> values = new ArrayList<>();

    Var let(String name, Expr value) {
        Var v = Var.fresh(name);
        bind(v, value);
        return v;
    }

    void bind(Var v, Expr value) {
        vars.add(v);
        values.add(value);
    }

    Expr wrap(Expr result) {
        Expr e = result;
        for (int i = vars.size() - 1; i >= 0; i--) e = new Let(vars.get(i), values.get(i), e);
        return e;
    }
}
