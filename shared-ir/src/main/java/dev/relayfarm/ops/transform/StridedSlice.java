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
 * {@code strided_slice(data, begin=[...], end=[...], strides=[...], axes=None, slice_mode="end")}
 * with numpy's rules: negative indices count from the end, out-of-range indices clamp, a negative
 * stride walks backwards. Lists shorter than the rank leave the remaining axes whole; {@code axes}
 * names which axes the lists apply to. With {@code slice_mode="size"} {@code end} holds sizes
 * ({@code -1} = to the end) and strides are ignored.
 *
 * <p>A dim that is Any or symbolic stays as it is when its axis is taken whole, and becomes Any
 * otherwise (its clamped length is only known at run time).
 */
public final class StridedSlice {
    private StridedSlice() {}

    /** {@code strides} and {@code axes} are null when not given. */
    public record StridedSliceAttrs(List<Long> begin, List<Long> end, List<Long> strides, List<Long> axes, String sliceMode) {}

    /** Ends at or beyond this mean "to the end" (TVM's frontends write int32 max or int64 max). */
    private static final long TO_END = Integer.MAX_VALUE;

    /** One axis' slice in absolute terms: the first index, the count and the step. */
    private record AxisSlice(long start, long length, long stride) {}

    public static final OpDef<StridedSliceAttrs> DEF = new OpDef<>(
            "strided_slice", 1, StridedSlice::parse, StridedSlice::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                int[] shape = x.shape();
                long[] st = Movement.strides(shape);
                List<long[]> spec = perAxis(a, shape.length);
                int[] outShape = new int[shape.length];
                long[] viewStrides = new long[shape.length];
                long offset = 0;
                for (int i = 0; i < shape.length; i++) {
                    AxisSlice s = resolve(shape[i], spec.get(i), a.sliceMode());
                    outShape[i] = Math.toIntExact(s.length());
                    viewStrides[i] = s.stride() * st[i];
                    if (s.length() > 0) offset += s.start() * st[i];
                }
                return List.of(Movement.view(x, outShape, offset, viewStrides));
            });

    static StridedSliceAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("strided_slice", attrs);
        for (String key : List.of("begin", "end")) {
            if (!r.has(key)) throw new RelationException("strided_slice: attribute '" + key + "' is required");
        }
        StridedSliceAttrs a = new StridedSliceAttrs(
                Args.boxed(r.longs("begin")),
                Args.boxed(r.longs("end")),
                Args.boxed(r.longs("strides", (long[]) null)),
                Args.boxed(r.longs("axes", (long[]) null)),
                r.string("slice_mode", "end"));
        r.finish();
        if (!a.sliceMode().equals("end") && !a.sliceMode().equals("size")) {
            throw new RelationException("strided_slice: slice_mode must be \"end\" or \"size\", got \"" + a.sliceMode() + "\"");
        }
        if (a.axes() != null && (a.begin().size() != a.axes().size() || a.end().size() != a.axes().size())) {
            throw new RelationException("strided_slice: with axes " + a.axes() + ", begin " + a.begin() + " and end " + a.end()
                    + " must have one entry per axis");
        }
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, StridedSliceAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("strided_slice", types, 0, "data");
        if (data == null) return false;
        List<long[]> spec = perAxis(a, data.rank());
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < data.rank(); i++) {
            Dim d = data.shape().get(i);
            long[] bes = spec.get(i);
            if (d.isStatic()) {
                out.add(Dim.of(resolve(d.value(), bes, a.sliceMode()).length()));
            } else {
                out.add(whole(bes, a.sliceMode()) ? d : Dim.ANY);
            }
        }
        reporter.assign(types.get(1), new TensorType(out, data.dtype()));
        return true;
    }

    /**
     * Per input axis, {@code {start, length, stride}} of the slice of a static {@code shape}: the
     * interpreter's normalization, shared with the kernel compute definitions so both agree.
     */
    public static long[][] resolved(int[] shape, StridedSliceAttrs a) {
        List<long[]> spec = perAxis(a, shape.length);
        long[][] out = new long[shape.length][];
        for (int i = 0; i < shape.length; i++) {
            AxisSlice s = resolve(shape[i], spec.get(i), a.sliceMode());
            out[i] = new long[] {s.start(), s.length(), s.stride()};
        }
        return out;
    }

    /** (begin, end, stride) per axis of the input, with defaults for the axes the lists leave out. */
    private static List<long[]> perAxis(StridedSliceAttrs a, int rank) {
        List<long[]> spec = new ArrayList<>();
        for (int i = 0; i < rank; i++) spec.add(new long[] {0, Long.MAX_VALUE, 1});
        int n = Math.max(a.begin().size(), a.end().size());
        if (a.axes() == null && n > rank) {
            throw new RelationException("strided_slice: begin " + a.begin() + " and end " + a.end() + " have " + n
                    + " entries but the input has rank " + rank);
        }
        for (int k = 0; k < n; k++) {
            int axis = a.axes() == null ? k : Args.axis("strided_slice", a.axes().get(k), rank);
            long stride = a.sliceMode().equals("size") || a.strides() == null || k >= a.strides().size() ? 1 : a.strides().get(k);
            if (stride == 0) throw new RelationException("strided_slice: stride " + k + " must not be 0, got strides " + a.strides());
            // Missing entries take the whole axis in the direction of the stride.
            long begin = k < a.begin().size() ? a.begin().get(k) : stride > 0 ? 0 : Long.MAX_VALUE;
            long end = k < a.end().size() ? a.end().get(k) : stride > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
            spec.set(axis, new long[] {begin, end, stride});
        }
        return spec;
    }

    private static boolean whole(long[] bes, String mode) {
        if (mode.equals("size")) return bes[0] == 0 && bes[1] < 0;
        return bes[2] == 1 && bes[0] == 0 && bes[1] >= TO_END;
    }

    /** numpy's slice normalization for an axis of size {@code n}. */
    private static AxisSlice resolve(long n, long[] bes, String mode) {
        long b = bes[0];
        long e = bes[1];
        long s = bes[2];
        if (mode.equals("size")) {
            long start = b < 0 ? Math.max(b + n, 0) : Math.min(b, n);
            long stop = e < 0 ? n : Math.min(start + e, n);
            return new AxisSlice(start, Math.max(stop - start, 0), 1);
        }
        if (s > 0) {
            long start = b < 0 ? Math.max(b + n, 0) : Math.min(b, n);
            long stop = e < 0 ? Math.max(e + n, 0) : Math.min(e, n);
            return new AxisSlice(start, stop > start ? (stop - start + s - 1) / s : 0, s);
        }
        long start = b < 0 ? Math.max(b + n, -1) : Math.min(b, n - 1);
        long stop = e < 0 ? Math.max(e + n, -1) : Math.min(e, n - 1);
        return new AxisSlice(start, start > stop ? (start - stop - s - 1) / -s : 0, s);
    }
}
