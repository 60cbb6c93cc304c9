package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
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
 * {@code take(data, indices, axis=None, batch_dims=0, mode="clip")}: picks slices of {@code data}
 * along {@code axis} (of the flattened data when None); the output shape is
 * {@code data[:axis] + indices[batch_dims:] + data[axis+1:]}. Out-of-range indices: {@code clip}
 * clamps to {@code [0, n-1]} (so -1 gives 0, as in TVM), {@code wrap} takes them modulo {@code n}
 * (so -1 is the last), {@code fast} promises they are in range; this reference kernel rejects a
 * violated promise rather than returning garbage.
 */
public final class Take {
    private Take() {}

    /** {@code axis} is null for "flatten first". */
    public record TakeAttrs(Long axis, long batchDims, String mode) {}

    public static final OpDef<TakeAttrs> DEF = new OpDef<>(
            "take", 2, Take::parse, Take::relation, OpPattern.INJECTIVE, Take::compute);

    static TakeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("take", attrs);
        Long axis = r.has("axis") ? r.integer("axis", 0) : null;
        r.integer("axis", 0); // marks an explicit axis=None as read
        TakeAttrs a = new TakeAttrs(axis, r.integer("batch_dims", 0), r.string("mode", "clip"));
        r.finish();
        if (!List.of("clip", "wrap", "fast").contains(a.mode())) {
            throw new RelationException("take: mode must be \"clip\", \"wrap\" or \"fast\", got \"" + a.mode() + "\"");
        }
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, TakeAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("take", types, 0, "data");
        TensorType indices = Args.indices("take", types, 1, "indices");
        if (data == null || indices == null) return false;
        List<Dim> out = new ArrayList<>();
        if (a.axis() == null) {
            if (a.batchDims() != 0) throw new RelationException("take: batch_dims must be 0 when axis is None, got " + a.batchDims());
            out.addAll(indices.shape());
        } else {
            int axis = Args.axis("take", a.axis(), data.rank());
            int b = batchDims(a, axis, indices.rank());
            for (int i = 0; i < b; i++) {
                if (!Dims.compatible(data.shape().get(i), indices.shape().get(i))) {
                    throw new RelationException("take: with batch_dims " + b + ", data " + Args.show(data.shape()) + " and indices "
                            + Args.show(indices.shape()) + " must agree on the first " + b + " dims");
                }
            }
            out.addAll(data.shape().subList(0, axis));
            out.addAll(indices.shape().subList(b, indices.rank()));
            out.addAll(data.shape().subList(axis + 1, data.rank()));
        }
        reporter.assign(types.get(2), new TensorType(out, data.dtype()));
        return true;
    }

    private static int batchDims(TakeAttrs a, int axis, int indicesRank) {
        long b = a.batchDims() < 0 ? a.batchDims() + indicesRank : a.batchDims();
        if (b < 0 || b > indicesRank || b > axis) {
            throw new RelationException("take: batch_dims " + a.batchDims() + " must be in [0, min(axis " + axis
                    + ", indices rank " + indicesRank + ")]");
        }
        return (int) b;
    }

    private static List<NDArray> compute(List<NDArray> in, TakeAttrs a) {
        NDArray data = in.get(0);
        NDArray indices = in.get(1);
        int[] ds = data.shape();
        int[] is = indices.shape();
        int axis;
        int b;
        if (a.axis() == null) {
            data = Movement.reshaped(data, new int[] {data.size()});
            ds = data.shape();
            axis = 0;
            b = 0;
        } else {
            axis = Args.axis("take", a.axis(), ds.length);
            b = batchDims(a, axis, is.length);
        }
        // View data as [batch, middle, n, inner] and indices as [batch, per-batch]; output is [batch, middle, per-batch, inner].
        int batch = Movement.product(ds, 0, b);
        int middle = Movement.product(ds, b, axis);
        int n = ds[axis];
        int inner = Movement.product(ds, axis + 1, ds.length);
        int perBatch = Movement.product(is, b, is.length);
        int[] outShape = new int[axis + (is.length - b) + (ds.length - axis - 1)];
        System.arraycopy(ds, 0, outShape, 0, axis);
        System.arraycopy(is, b, outShape, axis, is.length - b);
        System.arraycopy(ds, axis + 1, outShape, axis + is.length - b, ds.length - axis - 1);
        NDArray out = Movement.allocate(data.dtype(), outShape);
        if (n == 0 && out.size() > 0) throw new IllegalArgumentException("take: cannot take from axis " + axis + " of size 0");
        int pos = 0;
        for (int bi = 0; bi < batch; bi++) {
            for (int m = 0; m < middle; m++) {
                int base = (bi * middle + m) * n;
                for (int j = 0; j < perBatch; j++) {
                    long idx = indices.getLong(bi * perBatch + j);
                    int k = index(idx, n, a.mode());
                    Movement.copyElements(data, (base + k) * inner, out, pos, inner);
                    pos += inner;
                }
            }
        }
        return List.of(out);
    }

    private static int index(long idx, int n, String mode) {
        return switch (mode) {
            case "clip" -> (int) Math.min(Math.max(idx, 0), n - 1);
            case "wrap" -> (int) Math.floorMod(idx, (long) n);
            default -> {
                if (idx < 0 || idx >= n) throw new IllegalArgumentException("take: index " + idx + " is out of range [0, " + n + ") in mode \"fast\"");
                yield (int) idx;
            }
        };
    }
}
