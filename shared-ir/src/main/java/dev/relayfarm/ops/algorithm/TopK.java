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
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * {@code topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32")} (TVM's TopKAttrs):
 * the {@code k} largest (smallest with {@code is_ascend}) elements along {@code axis}, sorted, with
 * their positions. {@code ret_type} picks the result: "both" gives the tuple (values, indices),
 * "values" or "indices" one tensor. {@code k < 1} means the whole axis. Equal values keep their
 * order (the lower index first), which is what ONNX TopK specifies; NaN sorts above every number
 * (numpy's order), so it comes first in a descending top-k.
 */
public final class TopK {
    private TopK() {}

    public record TopKAttrs(long k, long axis, String retType, boolean isAscend, DType dtype) {}

    public static final OpDef<TopKAttrs> DEF = new OpDef<>("topk", 1, TopK::parse, TopK::relation, OpPattern.OPAQUE, TopK::compute);

    static TopKAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("topk", attrs);
        TopKAttrs a = new TopKAttrs(r.integer("k", 1), r.integer("axis", -1), r.string("ret_type", "both"),
                r.bool("is_ascend", false), r.dtype("dtype", DType.INT32));
        r.finish();
        if (!List.of("both", "values", "indices").contains(a.retType())) {
            throw new RelationException("topk: ret_type must be \"both\", \"values\" or \"indices\", got \"" + a.retType() + "\"");
        }
        if (!a.dtype().isInteger()) throw new RelationException("topk: dtype must be an integer type, got " + a.dtype());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, TopKAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor("topk", "data", types.get(0));
        if (x == null) return false;
        if (x.rank() == 0) throw new RelationException("topk: data must have rank >= 1, got a scalar");
        int axis = Rel.axis("topk", Math.toIntExact(a.axis()), x.rank());
        List<Dim> shape = new ArrayList<>(x.shape());
        Dim n = shape.get(axis);
        if (a.k() >= 1) {
            if (n.isStatic() && a.k() > n.value()) {
                throw new RelationException("topk: k=" + a.k() + " is larger than the axis " + axis + " of " + Rel.shape(x.shape()));
            }
            shape.set(axis, Dim.of(a.k()));
        }
        TensorType values = new TensorType(shape, x.dtype());
        TensorType indices = new TensorType(shape, a.dtype());
        reporter.assign(types.get(1), switch (a.retType()) {
            case "values" -> values;
            case "indices" -> indices;
            default -> new TupleType(List.of(values, indices));
        });
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, TopKAttrs a) {
        NDArray x = in.getFirst();
        int[] s = x.shape();
        int axis = Rel.axis("topk", Math.toIntExact(a.axis()), s.length);
        int n = s[axis];
        int k = a.k() < 1 ? n : Math.toIntExact(a.k());
        if (k > n) throw new IllegalArgumentException("topk: k=" + k + " is larger than the axis " + axis + " of " + Arrays.toString(s));
        int outer = 1, inner = 1;
        for (int i = 0; i < axis; i++) outer *= s[i];
        for (int i = axis + 1; i < s.length; i++) inner *= s[i];
        int[] os = s.clone();
        os[axis] = k;
        NDArray values = NDArray.zeros(x.dtype(), os);
        NDArray indices = NDArray.zeros(a.dtype(), os);
        boolean real = x.dtype().isFloat();
        boolean unsigned = x.dtype().code() == DType.Code.UINT;
        Integer[] order = new Integer[n];
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                final int base = o * n * inner + j;
                final int stride = inner;
                Comparator<Integer> byValue = real
                        ? (p, q) -> Double.compare(x.getDouble(base + p * stride), x.getDouble(base + q * stride))
                        : unsigned ? (p, q) -> Long.compareUnsigned(x.getLong(base + p * stride), x.getLong(base + q * stride))
                        : (p, q) -> Long.compare(x.getLong(base + p * stride), x.getLong(base + q * stride));
                Comparator<Integer> cmp = a.isAscend() ? byValue : byValue.reversed();
                for (int i = 0; i < n; i++) order[i] = i;
                Arrays.sort(order, cmp); // stable: ties keep the lower index first
                for (int i = 0; i < k; i++) {
                    int src = base + order[i] * stride;
                    int dst = (o * k + i) * inner + j;
                    if (real) values.setDouble(dst, x.getDouble(src));
                    else values.setLong(dst, x.getLong(src));
                    indices.setLong(dst, order[i]);
                }
            }
        }
        return switch (a.retType()) {
            case "values" -> List.of(values);
            case "indices" -> List.of(indices);
            default -> List.of(values, indices);
        };
    }
}
