package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.batch_matmul(x, y, out_dtype="", transpose_a=False, transpose_b=True)} as TVM:
 * {@code x [B, M, K]} ({@code [B, K, M]} transposed), {@code y [B, N, K]} by default ({@code [B, K, N]}
 * with transpose_b=False) → {@code [B, M, N]}; a batch of 1 on either side broadcasts.
 */
public final class BatchMatmul {
    public static final String NAME = "nn.batch_matmul";

    private BatchMatmul() {}

    public record BatchMatmulAttrs(DType outDtype, boolean transposeA, boolean transposeB) {}

    public static OpDef<BatchMatmulAttrs> def() {
        return new OpDef<>(NAME, 2, BatchMatmul::parse, BatchMatmul::relation, OpPattern.OUT_ELEMWISE_FUSABLE, BatchMatmul::compute);
    }

    static BatchMatmulAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        BatchMatmulAttrs a = new BatchMatmulAttrs(r.dtype("out_dtype", null), r.bool("transpose_a", false), r.bool("transpose_b", true));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, BatchMatmulAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor(NAME, "x", types.get(0));
        TensorType y = Rel.tensor(NAME, "y", types.get(1));
        if (x == null || y == null) return false;
        if (x.rank() != 3) throw new RelationException(NAME + ": x must have rank 3, got " + x);
        if (y.rank() != 3) throw new RelationException(NAME + ": y must have rank 3, got " + y);
        List<Dim> xs = x.shape(), ys = y.shape();
        Dim m = xs.get(a.transposeA() ? 2 : 1), k = xs.get(a.transposeA() ? 1 : 2);
        Dim yk = ys.get(a.transposeB() ? 2 : 1), n = ys.get(a.transposeB() ? 1 : 2);
        if (Rel.surelyDiffer(k, yk)) {
            throw new RelationException(NAME + ": x " + Rel.shape(xs) + " and y " + Rel.shape(ys)
                    + " disagree on the reduction dim (" + k + " vs " + yk + ")");
        }
        Dim bx = xs.get(0), by = ys.get(0);
        Dim batch;
        if (bx.equals(Dim.of(1))) batch = by;
        else if (by.equals(Dim.of(1)) || bx.equals(by)) batch = bx;
        else if (Rel.surelyDiffer(bx, by)) {
            throw new RelationException(NAME + ": batch dims of x " + Rel.shape(xs) + " and y " + Rel.shape(ys)
                    + " are not broadcastable (" + bx + " vs " + by + ")");
        } else batch = bx instanceof Dim.Any ? by : bx;
        reporter.assign(types.get(2), new TensorType(List.of(batch, m, n), a.outDtype() != null ? a.outDtype() : x.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, BatchMatmulAttrs a) {
        NDArray x = inputs.get(0), y = inputs.get(1);
        int bx = x.dim(0), by = y.dim(0);
        int m = x.dim(a.transposeA() ? 2 : 1), k = x.dim(a.transposeA() ? 1 : 2);
        int yk = y.dim(a.transposeB() ? 2 : 1), n = y.dim(a.transposeB() ? 1 : 2);
        if (k != yk || (bx != by && bx != 1 && by != 1)) {
            throw new IllegalArgumentException(NAME + ": x " + Arrays2.show(x.shape()) + " and y " + Arrays2.show(y.shape())
                    + " do not fit (transpose_a=" + a.transposeA() + ", transpose_b=" + a.transposeB() + ")");
        }
        int batch = Math.max(bx, by);
        if (bx == 0 || by == 0) batch = 0;
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        return List.of(MatMulKernels.batched(x, bx == 1 ? 0 : m * k, a.transposeA() ? m : k, a.transposeA(),
                y, by == 1 ? 0 : k * n, a.transposeB() ? k : n, a.transposeB(), batch, m, n, k, outType, new int[] {batch, m, n}));
    }
}
