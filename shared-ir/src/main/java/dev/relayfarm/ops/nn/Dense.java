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

/** {@code nn.dense(data [.., K], weight [N, K], units=None, out_dtype="")} → {@code [.., N]}. */
public final class Dense {
    public static final String NAME = "nn.dense";

    private Dense() {}

    /** {@code units} is -1 when unset; {@code outDtype} null means the data's dtype. */
    public record DenseAttrs(long units, DType outDtype) {}

    public static OpDef<DenseAttrs> def() {
        return new OpDef<>(NAME, 2, Dense::parse, Dense::relation, OpPattern.OUT_ELEMWISE_FUSABLE, Dense::compute);
    }

    static DenseAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        DenseAttrs a = new DenseAttrs(r.integer("units", -1), r.dtype("out_dtype", null));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, DenseAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        if (data.rank() < 1) throw new RelationException(NAME + ": data must have rank >= 1, got " + data);
        Dim k = data.shape().getLast();
        TensorType weight = Rel.tensor(NAME, "weight", types.get(1));
        if (weight == null) {
            if (a.units() < 0) return false;
            weight = new TensorType(List.of(Dim.of(a.units()), k), data.dtype());
            reporter.assign(types.get(1), weight);
        }
        if (weight.rank() != 2) throw new RelationException(NAME + ": weight must have rank 2, got " + weight);
        Dim wk = weight.shape().get(1);
        if (Rel.surelyDiffer(k, wk)) {
            throw new RelationException(NAME + ": data " + Rel.shape(data.shape()) + " and weight " + Rel.shape(weight.shape())
                    + " disagree on the reduction dim (" + k + " vs " + wk + ")");
        }
        if (a.units() >= 0 && Rel.surelyDiffer(weight.shape().get(0), Dim.of(a.units()))) {
            throw new RelationException(NAME + ": units=" + a.units() + " does not match weight " + Rel.shape(weight.shape()));
        }
        List<Dim> out = new ArrayList<>(data.shape().subList(0, data.rank() - 1));
        out.add(weight.shape().get(0));
        reporter.assign(types.get(2), new TensorType(out, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, DenseAttrs a) {
        NDArray x = inputs.get(0), w = inputs.get(1);
        int[] xs = x.shape();
        int k = xs[xs.length - 1], n = w.dim(0);
        if (w.rank() != 2 || w.dim(1) != k) {
            throw new IllegalArgumentException(NAME + ": data " + Arrays2.show(xs) + " and weight " + Arrays2.show(w.shape())
                    + " disagree on the reduction dim");
        }
        int m = 1;
        for (int i = 0; i < xs.length - 1; i++) m *= xs[i];
        int[] outShape = xs.clone();
        outShape[outShape.length - 1] = n;
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        return List.of(MatMulKernels.multiply(x, 0, k, false, w, 0, k, true, m, n, k, outType, outShape));
    }
}
