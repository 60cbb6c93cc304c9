package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * {@code combiner} of {@code source} over the reduction axes, starting from {@code init}. Only valid
 * as the whole body of a compute (as in TVM): lowering turns it into an init store before the
 * outermost reduction loop and an update store inside the innermost.
 */
public record Reduce(Combiner combiner, PrimExpr source, List<IterVar> axes, PrimExpr init) implements PrimExpr {
    public Reduce {
        axes = List.copyOf(axes);
        if (axes.isEmpty()) throw new IllegalArgumentException("a reduction needs at least one reduce axis");
        for (IterVar a : axes) {
            if (a.kind() != IterVar.Kind.REDUCE) throw new IllegalArgumentException("axis " + a.var().name() + " is not a reduce axis");
        }
        if (!init.dtype().equals(source.dtype())) {
            throw new IllegalArgumentException("reduction init " + init.dtype() + " differs from its source " + source.dtype());
        }
    }

    @Override
    public DType dtype() {
        return source.dtype();
    }
}
