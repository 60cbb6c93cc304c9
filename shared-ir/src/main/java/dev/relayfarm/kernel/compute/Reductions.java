package dev.relayfarm.kernel.compute;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/** Compute definitions of reductions over a set of axes (Relay's {@code sum}, {@code max}). */
public final class Reductions {
    private Reductions() {}

    /** {@code sum(x, axis=axes, keepdims)}; negative axes count from the end. */
    public static Compute sum(Tensor x, List<Integer> axes, boolean keepdims) {
        return reduce("sum", x, axes, keepdims);
    }

    public static Compute max(Tensor x, List<Integer> axes, boolean keepdims) {
        return reduce("max", x, axes, keepdims);
    }

    private static Compute reduce(String op, Tensor x, List<Integer> axes, boolean keepdims) {
        int rank = x.rank();
        TreeSet<Integer> reduced = new TreeSet<>();
        for (int a : axes) {
            int n = a < 0 ? a + rank : a;
            if (n < 0 || n >= rank) throw new IllegalArgumentException(op + ": axis must be in [" + -rank + ", " + (rank - 1) + "], got " + a);
            reduced.add(n);
        }
        List<IterVar> raxes = new ArrayList<>();
        List<Integer> outShape = new ArrayList<>();
        List<Integer> outDimOf = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            if (reduced.contains(d)) {
                raxes.add(Te.reduceAxis("r" + d, x.shape().get(d)));
                outDimOf.add(-1);
                if (keepdims) outShape.add(1);
            } else {
                outDimOf.add(outShape.size());
                outShape.add(x.shape().get(d));
            }
        }
        if (outShape.isEmpty()) outShape.add(1);
        boolean scalarOut = reduced.size() == rank && !keepdims;
        return Te.compute(op, outShape, ix -> {
            List<PrimExpr> idx = new ArrayList<>();
            int r = 0;
            for (int d = 0; d < rank; d++) {
                if (reduced.contains(d)) idx.add(raxes.get(r++).var());
                else idx.add(ix.get(keepdims ? d : outDimOf.get(d)));
            }
            PrimExpr src = x.at(idx);
            IterVar[] ra = raxes.toArray(IterVar[]::new);
            return op.equals("sum") ? Te.sum(src, ra) : Te.max(src, ra);
        });
    }

    /**
     * Default schedule: the outermost data axis parallel; when the reduction is not over the last
     * input axis, the reduce axes move outside the last data axis, which is vectorized (contiguous
     * reads, independent accumulators).
     */
    public static Schedule defaultSchedule(Compute out, boolean lastAxisReduced) {
        List<Primitive> ps = new ArrayList<>();
        List<String> data = out.axes().stream().map(IterVar::name).toList();
        List<String> red = out.reduceAxes().stream().map(IterVar::name).toList();
        if (!lastAxisReduced && data.size() >= 1) {
            List<String> order = new ArrayList<>(data.subList(0, data.size() - 1));
            order.addAll(red);
            order.add(data.getLast());
            ps.add(new Primitive.Reorder(out.name(), order));
            ps.add(new Primitive.Vectorize(out.name(), data.getLast()));
        }
        if (data.size() >= 2 || lastAxisReduced) ps.add(new Primitive.Parallel(out.name(), data.getFirst()));
        return new Schedule(ps);
    }
}
