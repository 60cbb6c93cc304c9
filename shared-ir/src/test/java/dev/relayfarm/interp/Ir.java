package dev.relayfarm.interp;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Var;
import java.util.List;

/** Terse IR construction for interpreter tests (the Relay text parser is tested elsewhere). */
final class Ir {
    private Ir() {}

    static Constant i32(int v) {
        return new Constant(NDArray.scalar(v));
    }

    static Constant f32(float v) {
        return new Constant(NDArray.scalar(v));
    }

    static Call op(String name, Expr... args) {
        return Call.op(name, args);
    }

    static Call add(Expr a, Expr b) {
        return op("add", a, b);
    }

    static Call sub(Expr a, Expr b) {
        return op("subtract", a, b);
    }

    static Call mul(Expr a, Expr b) {
        return op("multiply", a, b);
    }

    static Call eq(Expr a, Expr b) {
        return op("equal", a, b);
    }

    static Call less(Expr a, Expr b) {
        return op("less", a, b);
    }

    static Let let(Var v, Expr value, Expr body) {
        return new Let(v, value, body);
    }

    static Function fn(Expr body, Var... params) {
        return new Function(List.of(params), body);
    }

    static Call call(Expr callee, Expr... args) {
        return new Call(callee, List.of(args));
    }

    static If ifte(Expr c, Expr t, Expr e) {
        return new If(c, t, e);
    }

    static Var v(String name) {
        return Var.fresh(name);
    }

    static Var v(String name, dev.relayfarm.ir.Type annotation) {
        return Var.fresh(name, annotation);
    }
}
