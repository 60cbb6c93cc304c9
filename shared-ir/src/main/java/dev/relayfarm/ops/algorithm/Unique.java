package dev.relayfarm.ops.algorithm;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code unique(data, sorted=True, axis=None)}: the distinct elements of the flattened input, or
 * with {@code axis} the distinct slices along that axis, as the tuple (unique values, index of each
 * one's first occurrence, for every input element/slice the index of its value in the unique list,
 * count of each). {@code sorted} orders the unique values ascending (slices lexicographically);
 * otherwise they keep the order of first occurrence. The indices are int64. The number of unique
 * values depends on the data, so it is {@code Any} in the type. (TVM's unique is 1-D only; the axis
 * form follows numpy/ONNX.)
 */
public final class Unique {
    private Unique() {}

    /** {@code axis} is null for the flattened form. */
    public record UniqueAttrs(boolean sorted, Long axis) {}

    public static final OpDef<UniqueAttrs> DEF = new OpDef<>("unique", 1, Unique::parse, Unique::relation, OpPattern.OPAQUE, Unique::compute);

    static UniqueAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("unique", attrs);
        Long axis = r.has("axis") ? r.integer("axis", 0) : null;
        r.integer("axis", 0); // an explicit axis=None counts as read
        UniqueAttrs a = new UniqueAttrs(r.bool("sorted", true), axis);
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, UniqueAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor("unique", "data", types.get(0));
        if (x == null) return false;
        TensorType values, inverse;
        if (a.axis() == null) {
            values = new TensorType(List.of(Dim.ANY), x.dtype());
            Dim n = Dim.of(1);
            for (Dim d : x.shape()) n = dev.relayfarm.ir.Dims.mul(n, d);
            inverse = new TensorType(List.of(n), DType.INT64);
        } else {
            int axis = Rel.axis("unique", Math.toIntExact(a.axis()), x.rank());
            List<Dim> shape = new ArrayList<>(x.shape());
            shape.set(axis, Dim.ANY);
            values = new TensorType(shape, x.dtype());
            inverse = new TensorType(List.of(x.shape().get(axis)), DType.INT64);
        }
        TensorType perUnique = new TensorType(List.of(Dim.ANY), DType.INT64); // first indices and counts
        reporter.assign(types.get(1), new TupleType(List.of(values, perUnique, inverse, perUnique)));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, UniqueAttrs a) {
        NDArray x = in.getFirst();
        int[] s = x.shape();
        int axis = a.axis() == null ? -1 : Rel.axis("unique", Math.toIntExact(a.axis()), s.length);
        int n = axis < 0 ? x.elementCount() : s[axis];
        int outer = 1, inner = 1;
        if (axis >= 0) {
            for (int i = 0; i < axis; i++) outer *= s[i];
            for (int i = axis + 1; i < s.length; i++) inner *= s[i];
        }
        // Slice k as the flat indices of its elements, in row-major order.
        int sliceLen = axis < 0 ? 1 : outer * inner;
        int[][] slices = new int[n][sliceLen];
        for (int k = 0; k < n; k++) {
            if (axis < 0) slices[k][0] = k;
            else for (int o = 0, e = 0; o < outer; o++) for (int j = 0; j < inner; j++) slices[k][e++] = (o * s[axis] + k) * inner + j;
        }
        Map<List<Double>, Integer> first = new LinkedHashMap<>();
        int[] of = new int[n];
        List<Integer> firstIndex = new ArrayList<>();
        List<Long> counts = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            List<Double> key = new ArrayList<>(sliceLen);
            for (int e : slices[k]) key.add(x.getDouble(e));
            Integer id = first.get(key);
            if (id == null) {
                id = first.size();
                first.put(key, id);
                firstIndex.add(k);
                counts.add(0L);
            }
            of[k] = id;
            counts.set(id, counts.get(id) + 1);
        }
        List<List<Double>> keys = new ArrayList<>(first.keySet());
        Integer[] order = new Integer[keys.size()];
        for (int i = 0; i < order.length; i++) order[i] = i;
        if (a.sorted()) {
            java.util.Arrays.sort(order, (p, q) -> {
                for (int e = 0; e < sliceLen; e++) {
                    int c = Double.compare(keys.get(p).get(e), keys.get(q).get(e));
                    if (c != 0) return c;
                }
                return 0;
            });
        }
        int u = order.length;
        int[] rank = new int[u];
        for (int i = 0; i < u; i++) rank[order[i]] = i;
        int[] ys = axis < 0 ? new int[] {u} : s.clone();
        if (axis >= 0) ys[axis] = u;
        NDArray y = NDArray.zeros(x.dtype(), ys);
        NDArray idx = NDArray.zeros(DType.INT64, u), cnt = NDArray.zeros(DType.INT64, u), inv = NDArray.zeros(DType.INT64, n);
        boolean real = x.dtype().isFloat();
        for (int i = 0; i < u; i++) {
            int src = firstIndex.get(order[i]);
            idx.setLong(i, src);
            cnt.setLong(i, counts.get(order[i]));
            for (int e = 0; e < sliceLen; e++) {
                int from = slices[src][e];
                int to = axis < 0 ? i : ((e / inner) * u + i) * inner + e % inner;
                if (real) y.setDouble(to, x.getDouble(from));
                else y.setLong(to, x.getLong(from));
            }
        }
        for (int k = 0; k < n; k++) inv.setLong(k, rank[of[k]]);
        return List.of(y, idx, inv, cnt);
    }
}
