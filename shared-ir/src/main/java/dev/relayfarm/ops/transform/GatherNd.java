package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code gather_nd(data, indices)} in TVM's layout: {@code indices} has shape {@code (M, Y...)}; each
 * column of M values indexes the first M dims of data, and the output has shape
 * {@code Y + data[M:]}. Negative indices count from the end; others out of range are rejected.
 * With {@code batch_dims=B} the first B dims of Y must be the first B dims of data: they are batch
 * dims walked in step, each index column indexes data dims {@code [B, B+M)} within its batch, and the
 * output is {@code Y + data[B+M:]} (ONNX GatherND's batch_dims after moving M to the front).
 * {@code index_rank}, when given, must equal M.
 */
public final class GatherNd {
    private GatherNd() {}

    /** {@code indexRank} is null when not given. */
    public record GatherNdAttrs(long batchDims, Long indexRank) {}

    public static final OpDef<GatherNdAttrs> DEF = new OpDef<>(
            "gather_nd", 2, GatherNd::parse, GatherNd::relation, OpPattern.INJECTIVE, GatherNd::compute);

    static GatherNdAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("gather_nd", attrs);
        Long indexRank = r.has("index_rank") ? r.integer("index_rank", 0) : null;
        r.integer("index_rank", 0);
        GatherNdAttrs a = new GatherNdAttrs(r.integer("batch_dims", 0), indexRank);
        r.finish();
        if (a.batchDims() < 0) throw new RelationException("gather_nd: batch_dims must be non-negative, got " + a.batchDims());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, GatherNdAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("gather_nd", types, 0, "data");
        TensorType indices = Args.indices("gather_nd", types, 1, "indices");
        if (data == null || indices == null) return false;
        if (indices.rank() == 0) throw new RelationException("gather_nd: indices must have rank >= 1, got a scalar");
        Dim m = indices.shape().getFirst();
        long mv;
        if (m.isStatic()) {
            mv = m.value();
        } else if (a.indexRank() != null) {
            mv = a.indexRank();
        } else {
            throw new RelationException("gather_nd: the first dim of indices " + Args.show(indices.shape())
                    + " must be static (or index_rank given) to know how many data dims it indexes");
        }
        if (a.indexRank() != null && a.indexRank() != mv) {
            throw new RelationException("gather_nd: index_rank " + a.indexRank() + " does not match the first dim " + mv + " of indices");
        }
        long b = a.batchDims();
        if (mv + b > data.rank()) {
            throw new RelationException("gather_nd: indices " + Args.show(indices.shape()) + " index " + mv + " dims"
                    + (b > 0 ? " after " + b + " batch dims" : "") + " but data " + Args.show(data.shape()) + " has rank " + data.rank());
        }
        if (b > indices.rank() - 1) {
            throw new RelationException("gather_nd: batch_dims " + b + " needs indices of rank > " + b + ", got " + Args.show(indices.shape()));
        }
        for (int d = 0; d < b; d++) {
            Dim di = indices.shape().get(d + 1);
            Dim dd = data.shape().get(d);
            if (di.isStatic() && dd.isStatic() && di.value() != dd.value()) {
                throw new RelationException("gather_nd: batch dim " + d + " of indices " + Args.show(indices.shape()) + " is " + di.value()
                        + " but of data " + Args.show(data.shape()) + " is " + dd.value());
            }
        }
        List<Dim> out = new ArrayList<>(indices.shape().subList(1, indices.rank()));
        out.addAll(data.shape().subList((int) (b + mv), data.rank()));
        reporter.assign(types.get(2), new TensorType(out, data.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, GatherNdAttrs a) {
        NDArray data = in.get(0);
        NDArray indices = in.get(1);
        int[] ds = data.shape();
        int[] is = indices.shape();
        int m = is[0];
        int b = (int) a.batchDims();
        int count = Movement.product(is, 1, is.length); // index tuples, one per output slice
        int inner = Movement.product(ds, b + m, ds.length);
        // Index tuples of one batch are contiguous in Y, as are the data elements of one batch.
        int batches = Movement.product(ds, 0, b);
        int perBatch = batches == 0 ? 0 : count / batches;
        int batchSize = Movement.product(ds, b, ds.length);
        long[] st = Movement.strides(ds);
        int[] outShape = new int[is.length - 1 + ds.length - b - m];
        System.arraycopy(is, 1, outShape, 0, is.length - 1);
        System.arraycopy(ds, b + m, outShape, is.length - 1, ds.length - b - m);
        NDArray out = Movement.allocate(data.dtype(), outShape);
        for (int j = 0; j < count; j++) {
            long src = (long) (j / perBatch) * batchSize;
            for (int k = 0; k < m; k++) {
                int dim = ds[b + k];
                long idx = indices.getLong(k * count + j);
                if (idx < -dim || idx >= dim) {
                    throw new IllegalArgumentException("gather_nd: index " + idx + " is out of range for dim " + (b + k) + " of size " + dim);
                }
                src += (idx < 0 ? idx + dim : idx) * st[b + k];
            }
            Movement.copyElements(data, (int) src, out, j * inner, inner);
        }
        return List.of(out);
    }
}
