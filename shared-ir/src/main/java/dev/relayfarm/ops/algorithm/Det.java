package dev.relayfarm.ops.algorithm;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.List;

/**
 * {@code det(data)}: the determinant of each square matrix in the last two dims of a float tensor
 * {@code [..., M, M]}, giving {@code [...]}. Computed by LU decomposition with partial pivoting in
 * double precision (so singular matrices give an exact or near 0, never an error).
 */
public final class Det {
    private Det() {}

    public static final OpDef<NoAttrs> DEF = new OpDef<>("det", 1, a -> NoAttrs.parse("det", a), Det::relation, OpPattern.OPAQUE,
            (in, a) -> List.of(compute(in.getFirst())));

    static boolean relation(List<Type> types, int numInputs, NoAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor("det", "data", types.get(0));
        if (x == null) return false;
        if (!x.dtype().isFloat()) throw new RelationException("det: data must have a float dtype, got " + x.dtype());
        if (x.rank() < 2) throw new RelationException("det: data must have rank >= 2, got " + Rel.shape(x.shape()));
        Dim m = x.shape().get(x.rank() - 2), k = x.shape().get(x.rank() - 1);
        if (m.isStatic() && k.isStatic() && m.value() != k.value()) {
            throw new RelationException("det: the last two dims must be equal (square matrices), got " + Rel.shape(x.shape()));
        }
        reporter.assign(types.get(1), new TensorType(x.shape().subList(0, x.rank() - 2), x.dtype()));
        return true;
    }

    private static NDArray compute(NDArray x) {
        int[] s = x.shape();
        int m = s[s.length - 1];
        if (s[s.length - 2] != m) throw new IllegalArgumentException("det: the last two dims must be equal, got " + java.util.Arrays.toString(s));
        int[] outShape = java.util.Arrays.copyOf(s, s.length - 2);
        NDArray out = NDArray.zeros(x.dtype(), outShape);
        double[] a = new double[m * m];
        for (int b = 0; b < out.elementCount(); b++) {
            for (int i = 0; i < m * m; i++) a[i] = x.getDouble(b * m * m + i);
            out.setDouble(b, luDeterminant(a, m));
        }
        return out;
    }

    /** Gaussian elimination with partial pivoting; {@code a} is overwritten. */
    static double luDeterminant(double[] a, int m) {
        double det = 1;
        for (int c = 0; c < m; c++) {
            int pivot = c;
            for (int r = c + 1; r < m; r++) if (Math.abs(a[r * m + c]) > Math.abs(a[pivot * m + c])) pivot = r;
            if (a[pivot * m + c] == 0) return 0;
            if (pivot != c) {
                for (int k = 0; k < m; k++) {
                    double t = a[c * m + k];
                    a[c * m + k] = a[pivot * m + k];
                    a[pivot * m + k] = t;
                }
                det = -det;
            }
            double p = a[c * m + c];
            det *= p;
            for (int r = c + 1; r < m; r++) {
                double f = a[r * m + c] / p;
                for (int k = c; k < m; k++) a[r * m + k] -= f * a[c * m + k];
            }
        }
        return det;
    }
}
