package dev.relayfarm.kernel.compute;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nn.dense}: {@code out[i, j] = sum_k data[i, k] * weight[j, k]}, computed from a packed copy of
 * the weight, {@code weight_packed[jo, k, ji] = weight[jo*bn + ji, k]} (zero-padded to a multiple of
 * {@code bn}), so that the innermost {@code ji} loop reads contiguous weights and vectorizes.
 *
 * <p>The packing is a stage of the kernel, run on every call; moving it to compile time for constant
 * weights is the job of the data-packing layer that is not built yet.
 */
public final class Dense {
    private Dense() {}

    /** The kernel's tensors: the packed weight stage and the output. */
    public record Def(Compute packed, Compute out, int bn, int mi) {}

    public static Def compute(Tensor data, Tensor weight) {
        if (data.rank() != 2 || weight.rank() != 2) throw new IllegalArgumentException("dense needs 2-D data and weight, got " + data.shape() + " and " + weight.shape());
        int m = data.shape().get(0), k = data.shape().get(1), n = weight.shape().get(0);
        if (weight.shape().get(1) != k) throw new IllegalArgumentException("dense: data has " + k + " columns but weight " + weight.shape() + " has " + weight.shape().get(1));
        int bn = n >= 16 ? 16 : n;
        int mi = Math.min(4, m);
        int no = (n + bn - 1) / bn;
        Compute packed = Te.compute("weight_packed", List.of(no, k, bn), List.of("jo", "pk", "ji"), ix -> {
            PrimExpr row = ix.get(0).mul(bn).add(ix.get(2));
            PrimExpr v = weight.at(row, ix.get(1));
            return n % bn == 0 ? v : new Select(row.lt(PrimExpr.of(n)), v, Te.zero(weight.dtype()));
        });
        IterVar r = Te.reduceAxis("rk", k);
        Compute out = Te.compute("dense", List.of(m, n), ix -> Te.sum(
                data.at(ix.get(0), r.var()).mul(packed.at(ix.get(1).div(bn), r.var(), ix.get(1).mod(bn))), r));
        return new Def(packed, out, bn, mi);
    }

    /**
     * Default schedule: a {@code mi x bn} register tile accumulated locally (cache_write computed at
     * the tile loop), reduction outermost inside the tile, rows unrolled, the {@code bn} columns
     * vectorized; tiles fused and spread across threads. The packing stage is parallel over column
     * blocks, reading weight rows in order.
     */
    public static Schedule defaultSchedule(Def d) {
        String o = d.out().name(), p = d.packed().name(), local = o + "_local";
        List<Primitive> ps = new ArrayList<>(List.of(
                new Primitive.Parallel(p, "jo"),
                // read weight rows contiguously; the stride-bn writes stay in cache (a gather per
                // vector of ji was ~20x slower on 1x2048x1000)
                new Primitive.Reorder(p, List.of("ji", "pk")),
                new Primitive.CacheWrite(o),
                new Primitive.Tile(o, "i", "j", d.mi(), d.bn()),
                new Primitive.Fuse(o, "i_o", "j_o"),
                new Primitive.Parallel(o, "i_o_j_o_f"),
                new Primitive.Vectorize(o, "j_i"),
                new Primitive.ComputeAt(local, o, "i_o_j_o_f"),
                new Primitive.Reorder(local, List.of("rk", "i", "j")),
                new Primitive.Unroll(local, "i"),
                new Primitive.Vectorize(local, "j")));
        return new Schedule(ps);
    }
}
