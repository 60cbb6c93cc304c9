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
 * {@code tile(data, reps=[...])} as numpy: the shorter of shape and reps is padded with leading 1s,
 * then each dim is repeated {@code reps[i]} times: {@code tile(Tensor[(n, 3)], reps=[2]) : Tensor[(n, 6)]}.
 */
public final class Tile {
    private Tile() {}

    public record TileAttrs(List<Long> reps) {}

    public static final OpDef<TileAttrs> DEF = new OpDef<>(
            "tile", 1, Tile::parse, Tile::relation, OpPattern.INJECTIVE, Tile::compute);

    static TileAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("tile", attrs);
        if (!r.has("reps")) throw new RelationException("tile: attribute 'reps' is required");
        TileAttrs a = new TileAttrs(Args.boxed(r.longs("reps")));
        r.finish();
        for (long v : a.reps()) if (v < 0) throw new RelationException("tile: reps " + a.reps() + " must be non-negative");
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, TileAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("tile", types, 0, "data");
        if (data == null) return false;
        int rank = Math.max(data.rank(), a.reps().size());
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < rank; i++) out.add(Dims.mul(dim(data.shape(), rank, i), Dim.of(rep(a, rank, i))));
        reporter.assign(types.get(1), new TensorType(out, data.dtype()));
        return true;
    }

    private static Dim dim(List<Dim> shape, int rank, int i) {
        int k = i - (rank - shape.size());
        return k < 0 ? Dim.of(1) : shape.get(k);
    }

    private static long rep(TileAttrs a, int rank, int i) {
        int k = i - (rank - a.reps().size());
        return k < 0 ? 1 : a.reps().get(k);
    }

    private static List<NDArray> compute(List<NDArray> in, TileAttrs a) {
        NDArray x = in.getFirst();
        int[] s = x.shape();
        int rank = Math.max(s.length, a.reps().size());
        int[] padded = new int[rank];
        for (int i = 0; i < rank; i++) padded[i] = Math.toIntExact(dim(Args.dims(s), rank, i).value());
        long[] st = Movement.strides(padded);
        // Tiling is a view of shape (r0, d0, r1, d1, ...) where each repeat axis has stride 0;
        // row-major, that is exactly the tiled array.
        int[] viewShape = new int[2 * rank];
        long[] viewStrides = new long[2 * rank];
        int[] outShape = new int[rank];
        for (int i = 0; i < rank; i++) {
            viewShape[2 * i] = Math.toIntExact(rep(a, rank, i));
            viewShape[2 * i + 1] = padded[i];
            viewStrides[2 * i + 1] = st[i];
            outShape[i] = viewShape[2 * i] * padded[i];
        }
        return List.of(Movement.reshaped(Movement.view(x, viewShape, 0, viewStrides), outShape));
    }
}
