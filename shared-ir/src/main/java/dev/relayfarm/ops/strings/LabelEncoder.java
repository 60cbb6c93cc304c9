package dev.relayfarm.ops.strings;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.nn.Rel;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code label_encoder(x, keys, values, default)} (ONNX ai.onnx.ml LabelEncoder): every element of {@code x} found
 * among {@code keys} (1-D, x's dtype) becomes the value at the same position of {@code values} (1-D, as many);
 * any other becomes {@code default} (a scalar of values' dtype). The output has x's shape and values' dtype. Keys
 * and values are tensors of any dtype, strings included, so one operator covers string↔int↔float maps. Floats
 * match by value, NaN matching NaN and -0.0 matching 0.0; when a key repeats, its first value wins.
 */
public final class LabelEncoder {
    private LabelEncoder() {}

    public static final OpDef<NoAttrs> DEF = new OpDef<>("label_encoder", 4, a -> NoAttrs.parse("label_encoder", a),
            (types, n, attrs, reporter) -> {
                TensorType x = Rel.tensor("label_encoder", "data", types.get(0));
                TensorType k = Rel.tensorOfRank("label_encoder", "keys", types.get(1), 1);
                TensorType v = Rel.tensorOfRank("label_encoder", "values", types.get(2), 1);
                TensorType d = Rel.tensorOfRank("label_encoder", "default", types.get(3), 0);
                if (x == null || k == null || v == null || d == null) return false;
                if (!k.dtype().equals(x.dtype())) throw new RelationException("label_encoder: keys are " + k.dtype() + " but the data is " + x.dtype());
                if (!d.dtype().equals(v.dtype())) throw new RelationException("label_encoder: default is " + d.dtype() + " but the values are " + v.dtype());
                if (k.shape().getFirst().isStatic() && v.shape().getFirst().isStatic() && !k.shape().getFirst().equals(v.shape().getFirst())) {
                    throw new RelationException("label_encoder: " + k.shape().getFirst() + " keys but " + v.shape().getFirst() + " values");
                }
                reporter.assign(types.get(n), new TensorType(x.shape(), v.dtype()));
                return true;
            }, OpPattern.OPAQUE, (in, attrs) -> List.of(compute(in.get(0), in.get(1), in.get(2), in.get(3))));

    static NDArray compute(NDArray x, NDArray keys, NDArray values, NDArray dflt) {
        if (keys.elementCount() != values.elementCount()) {
            throw new IllegalArgumentException("label_encoder: " + keys.elementCount() + " keys but " + values.elementCount() + " values");
        }
        Map<Object, Integer> index = new HashMap<>();
        for (int i = 0; i < keys.elementCount(); i++) index.putIfAbsent(key(keys, i), i);
        NDArray out = NDArray.zeros(values.dtype(), x.shape());
        for (int i = 0; i < x.elementCount(); i++) {
            Integer at = index.get(key(x, i));
            if (at == null) copy(dflt, 0, out, i);
            else copy(values, at, out, i);
        }
        return out;
    }

    /** A hashable key for element {@code i}: the string, the integer, or the float value (NaN and -0.0 canonical). */
    private static Object key(NDArray a, int i) {
        if (a.dtype().isString()) return a.stringData()[i];
        if (a.dtype().isFloat()) {
            double d = a.getDouble(i);
            return Double.isNaN(d) ? Double.NaN : d == 0 ? 0.0 : d;
        }
        return a.getLong(i);
    }

    private static void copy(NDArray from, int i, NDArray to, int j) {
        if (to.dtype().isString()) to.stringData()[j] = from.stringData()[i];
        else if (to.dtype().isFloat()) to.setDouble(j, from.getDouble(i));
        else to.setLong(j, from.getLong(i));
    }
}
