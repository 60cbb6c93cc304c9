package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;

/** A call of a math function on float arguments of one dtype. */
public record Call(MathFn fn, List<PrimExpr> args) implements PrimExpr {
    public Call {
        args = List.copyOf(args);
        if (args.size() != fn.arity) throw new IllegalArgumentException(fn + " takes " + fn.arity + " arguments, got " + args.size());
        if (!args.getFirst().dtype().isFloat()) throw new IllegalArgumentException(fn + " needs float arguments, got " + args.getFirst().dtype());
    }

    @Override
    public DType dtype() {
        return args.getFirst().dtype();
    }
}
