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
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nn.matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False)}:
 * {@code a [.., M, K] · b [K, N] → [.., M, N]}; with {@code transpose_a} a is {@code [K, M]} (2-D), with
 * {@code transpose_b} b is {@code [N, K]} (then it is nn.dense).
 */
public final class Matmul {
    public static final String NAME = "nn.matmul";

    private Matmul() {}

    public record MatmulAttrs(long units, DType outDtype, boolean transposeA, boolean transposeB) {}

    public static OpDef<MatmulAttrs> def() {
        return new OpDef<>(NAME, 2, Matmul::parse, Matmul::relation, OpPattern.OUT_ELEMWISE_FUSABLE, Matmul::compute);
    }

    static MatmulAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        MatmulAttrs a = new MatmulAttrs(r.integer("units", -1), r.dtype("out_dtype", null),
                r.bool("transpose_a", false), r.bool("transpose_b", false));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, MatmulAttrs a, TypeReporter reporter) {
        TensorType ta = Rel.tensor(NAME, "tensor_a", types.get(0));
        TensorType tb = Rel.tensor(NAME, "tensor_b", types.get(1));
        if (ta == null || tb == null) return false;
        if (a.transposeA() ? ta.rank() != 2 : ta.rank() < 1) {
            throw new RelationException(NAME + ": tensor_a must have rank " + (a.transposeA() ? "2 with transpose_a" : ">= 1")
                    + ", got " + ta);
        }
        if (tb.rank() != 2) throw new RelationException(NAME + ": tensor_b must have rank 2, got " + tb);
        Dim k = a.transposeA() ? ta.shape().get(0) : ta.shape().getLast();
        Dim bk = tb.shape().get(a.transposeB() ? 1 : 0);
        Dim n = tb.shape().get(a.transposeB() ? 0 : 1);
        if (Rel.surelyDiffer(k, bk)) {
            throw new RelationException(NAME + ": tensor_a " + Rel.shape(ta.shape()) + " and tensor_b " + Rel.shape(tb.shape())
                    + " disagree on the reduction dim (" + k + " vs " + bk + ")");
        }
        if (a.units() >= 0 && Rel.surelyDiffer(n, Dim.of(a.units()))) {
            throw new RelationException(NAME + ": units=" + a.units() + " does not match tensor_b " + Rel.shape(tb.shape()));
        }
        List<Dim> out = new ArrayList<>();
        if (a.transposeA()) out.add(ta.shape().get(1));
        else out.addAll(ta.shape().subList(0, ta.rank() - 1));
        out.add(n);
        reporter.assign(types.get(2), new TensorType(out, a.outDtype() != null ? a.outDtype() : ta.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, MatmulAttrs a) {
        NDArray x = inputs.get(0), y = inputs.get(1);
        int[] xs = x.shape();
        int k = a.transposeA() ? xs[0] : xs[xs.length - 1];
        int m = 1;
        if (a.transposeA()) m = xs[1];
        else for (int i = 0; i < xs.length - 1; i++) m *= xs[i];
        int bk = y.dim(a.transposeB() ? 1 : 0), n = y.dim(a.transposeB() ? 0 : 1);
        if (bk != k) {
            throw new IllegalArgumentException(NAME + ": tensor_a " + Arrays2.show(xs) + " and tensor_b " + Arrays2.show(y.shape())
                    + " disagree on the reduction dim (" + k + " vs " + bk + ")");
        }
        int[] outShape;
        if (a.transposeA()) {
            outShape = new int[] {m, n};
        } else {
            outShape = xs.clone();
            outShape[outShape.length - 1] = n;
        }
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        return List.of(MatMulKernels.multiply(x, 0, a.transposeA() ? m : k, a.transposeA(), y, 0, a.transposeB() ? k : n,
                a.transposeB(), m, n, k, outType, outShape));
    }
}
