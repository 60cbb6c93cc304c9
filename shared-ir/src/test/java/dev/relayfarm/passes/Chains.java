package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;

/** 100,000-node programs for the no-stack-overflow tests of the normal-form passes. */
final class Chains {
    static final int N = 100_000;

    private Chains() {}

    /** {@code @main(%x) { negative(abs(negative(...%x))) }}: one dataflow chain of N calls. */
    static IRModule dataflow() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        Expr e = x;
        for (int i = 0; i < N; i++) e = Call.op(i % 2 == 0 ? "negative" : "abs", e);
        return typed(new Function(List.of(x), e));
    }

    /**
     * {@code @main(%x) { let %v0 = negative(%x); let %v1 = negative(%v0); ... %vN }}; with
     * {@code deadEvery > 0}, every such binding's variable is left unused (its successor reads the
     * one before).
     */
    static IRModule lets(int deadEvery) {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        List<Var> vars = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        Var live = x;
        for (int i = 0; i < N; i++) {
            Var v = Var.fresh("v" + i);
            vars.add(v);
            values.add(Call.op("negative", live));
            if (deadEvery <= 0 || i % deadEvery != 0) live = v;
        }
        Expr body = live;
        for (int i = N - 1; i >= 0; i--) body = new Let(vars.get(i), values.get(i), body);
        return typed(new Function(List.of(x), body));
    }

    private static IRModule typed(Function main) {
        return TypeInference.infer(IRModule.fromMain(main)).module();
    }

    /** Runs one pass without debug validation (the point is the pass's own stack use). */
    static IRModule run(Pass pass, IRModule in) {
        return new Sequential("t", List.of(pass)).run(in, new PassContext(PassOptions.level(3))).module();
    }
}
