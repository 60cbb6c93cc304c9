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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code layout_transform(data, src_layout="NCHW", dst_layout="NCHW8c")}: reorders and blocks axes
 * between TVM layout strings. Upper-case letters are primal axes, {@code 8c} is a sub-axis of size 8
 * split off primal {@code C} ({@code C} then counts blocks). Both layouts must name the same primal
 * axes, each with at most one sub-axis, and where both block an axis the block sizes must nest
 * ({@code NCHW8c <-> NCHW4c}). Unlike TVM, which pads a partial last block, a blocked primal dim
 * must divide by its block size.
 * <pre>
 * layout_transform(Tensor[(1, 16, 5, 5)], "NCHW", "NCHW8c") : Tensor[(1, 2, 5, 5, 8)]
 * layout_transform(Tensor[(n, 3, 5, 5)], "NCHW", "NHWC")    : Tensor[(n, 5, 5, 3)]
 * </pre>
 */
public final class LayoutTransform {
    private LayoutTransform() {}

    public record LayoutTransformAttrs(String srcLayout, String dstLayout) {}

    /** One axis of a layout: a primal axis ({@code factor == 0}) or a sub-axis of {@code factor} elements. */
    private record Axis(char primal, long factor) {}

    public static final OpDef<LayoutTransformAttrs> DEF = new OpDef<>(
            "layout_transform", 1, LayoutTransform::parse, LayoutTransform::relation, OpPattern.INJECTIVE, LayoutTransform::compute);

    static LayoutTransformAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("layout_transform", attrs);
        for (String key : List.of("src_layout", "dst_layout")) {
            if (!r.has(key)) throw new RelationException("layout_transform: attribute '" + key + "' is required");
        }
        LayoutTransformAttrs a = new LayoutTransformAttrs(r.string("src_layout", ""), r.string("dst_layout", ""));
        r.finish();
        List<Axis> src = layout(a.srcLayout());
        List<Axis> dst = layout(a.dstLayout());
        if (!primals(src).equals(primals(dst))) {
            throw new RelationException("layout_transform: " + a.srcLayout() + " and " + a.dstLayout() + " must have the same primal axes");
        }
        return a;
    }

    private static List<Axis> layout(String text) {
        List<Axis> axes = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (Character.isUpperCase(c)) {
                axes.add(new Axis(c, 0));
                i++;
                continue;
            }
            int start = i;
            while (i < text.length() && Character.isDigit(text.charAt(i))) i++;
            if (start == i || i >= text.length() || !Character.isLowerCase(text.charAt(i))) {
                throw new RelationException("layout_transform: bad layout \"" + text + "\": expected an upper-case axis or a block like 8c at position " + start);
            }
            long factor = Long.parseLong(text.substring(start, i));
            if (factor <= 0) throw new RelationException("layout_transform: bad layout \"" + text + "\": block size must be positive");
            axes.add(new Axis(Character.toUpperCase(text.charAt(i)), factor));
            i++;
        }
        Map<String, Boolean> seen = new HashMap<>();
        for (Axis ax : axes) {
            String key = ax.primal() + (ax.factor() == 0 ? "" : "sub");
            if (seen.put(key, true) != null) throw new RelationException("layout_transform: bad layout \"" + text + "\": axis " + key.charAt(0) + " appears twice");
        }
        for (Axis ax : axes) {
            if (ax.factor() > 0 && !seen.containsKey(String.valueOf(ax.primal()))) {
                throw new RelationException("layout_transform: bad layout \"" + text + "\": block " + ax.factor()
                        + Character.toLowerCase(ax.primal()) + " has no primal axis " + ax.primal());
            }
        }
        return axes;
    }

    private static String primals(List<Axis> layout) {
        StringBuilder sb = new StringBuilder();
        layout.stream().filter(ax -> ax.factor() == 0).map(Axis::primal).sorted().forEach(sb::append);
        return sb.toString();
    }

    private static long factor(List<Axis> layout, char primal) {
        for (Axis ax : layout) if (ax.primal() == primal && ax.factor() > 0) return ax.factor();
        return 0;
    }

    static boolean relation(List<Type> types, int numInputs, LayoutTransformAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("layout_transform", types, 0, "data");
        if (data == null) return false;
        reporter.assign(types.get(1), new TensorType(outShape(a, data.shape()), data.dtype()));
        return true;
    }

    static List<Dim> outShape(LayoutTransformAttrs a, List<Dim> in) {
        List<Axis> src = layout(a.srcLayout());
        List<Axis> dst = layout(a.dstLayout());
        if (in.size() != src.size()) {
            throw new RelationException("layout_transform: input " + Args.show(in) + " has rank " + in.size() + " but layout "
                    + a.srcLayout() + " has " + src.size() + " axes");
        }
        // The full size of each primal axis: its dim, times its block when the source blocks it.
        Map<Character, Dim> total = new HashMap<>();
        for (int i = 0; i < src.size(); i++) {
            Axis ax = src.get(i);
            Dim d = in.get(i);
            if (ax.factor() > 0) {
                if (d.isStatic() && d.value() != ax.factor()) {
                    throw new RelationException("layout_transform: block axis " + ax.factor() + Character.toLowerCase(ax.primal())
                            + " of " + a.srcLayout() + " has size " + d + " in input " + Args.show(in));
                }
                continue;
            }
            long g = factor(src, ax.primal());
            total.put(ax.primal(), g == 0 ? d : Dims.mul(d, Dim.of(g)));
        }
        List<Dim> out = new ArrayList<>();
        for (Axis ax : dst) {
            if (ax.factor() > 0) {
                out.add(Dim.of(ax.factor()));
                continue;
            }
            Dim t = total.get(ax.primal());
            long f = factor(dst, ax.primal());
            if (f == 0) {
                out.add(t);
            } else {
                if (t.isStatic() && t.value() % f != 0) {
                    throw new RelationException("layout_transform: axis " + ax.primal() + " of size " + t + " does not divide into blocks of "
                            + f + " for " + a.dstLayout());
                }
                out.add(Dims.div(t, Dim.of(f)));
            }
        }
        return out;
    }

    /**
     * Splits every primal axis into its finest blocks (outermost first) so that each axis of either
     * layout is a run of consecutive fine axes; the transform is then a transpose of fine axes.
     */
    private static List<NDArray> compute(List<NDArray> in, LayoutTransformAttrs a) {
        NDArray x = in.getFirst();
        int[] s = x.shape();
        int[] outShape = Args.ints(outShape(a, Args.dims(s)));
        List<Axis> src = layout(a.srcLayout());
        List<Axis> dst = layout(a.dstLayout());
        Map<Character, long[]> fine = new HashMap<>();
        for (int i = 0; i < src.size(); i++) {
            Axis ax = src.get(i);
            if (ax.factor() > 0) continue;
            long g = factor(src, ax.primal());
            long f = factor(dst, ax.primal());
            long t = g == 0 ? s[i] : s[i] * g;
            long small = Math.min(g == 0 ? Long.MAX_VALUE : g, f == 0 ? Long.MAX_VALUE : f);
            long big = Math.max(g, f);
            if (g == 0 && f == 0) fine.put(ax.primal(), new long[] {t});
            else if (g == 0 || f == 0 || g == f) fine.put(ax.primal(), new long[] {t / big, big});
            else if (big % small == 0) fine.put(ax.primal(), new long[] {t / big, big / small, small});
            else throw new RelationException("layout_transform: blocks of " + g + " and " + f + " for axis " + ax.primal() + " do not nest");
        }
        // Source strides of each fine axis: within one source axis the fine axes are row-major.
        Map<Character, long[]> fineStride = new HashMap<>();
        long[] st = Movement.strides(s);
        for (int i = 0; i < src.size(); i++) {
            Axis ax = src.get(i);
            long[] sizes = fine.get(ax.primal());
            long[] strides = fineStride.computeIfAbsent(ax.primal(), k -> new long[sizes.length]);
            int[] range = range(sizes, ax.factor() > 0 ? ax.factor() : factor(src, ax.primal()), ax.factor() > 0);
            long acc = st[i];
            for (int k = range[1] - 1; k >= range[0]; k--) {
                strides[k] = acc;
                acc *= sizes[k];
            }
        }
        List<Integer> viewShape = new ArrayList<>();
        List<Long> viewStrides = new ArrayList<>();
        for (Axis ax : dst) {
            long[] sizes = fine.get(ax.primal());
            int[] range = range(sizes, ax.factor() > 0 ? ax.factor() : factor(dst, ax.primal()), ax.factor() > 0);
            for (int k = range[0]; k < range[1]; k++) {
                viewShape.add(Math.toIntExact(sizes[k]));
                viewStrides.add(fineStride.get(ax.primal())[k]);
            }
        }
        int[] vs = viewShape.stream().mapToInt(Integer::intValue).toArray();
        long[] vst = viewStrides.stream().mapToLong(Long::longValue).toArray();
        return List.of(Movement.reshaped(Movement.view(x, vs, 0, vst), outShape));
    }

    /**
     * The fine axes [from, to) that make up the block part (when {@code inner}) or the outer part of
     * an axis blocked by {@code block} (0 = not blocked: everything is outer).
     */
    private static int[] range(long[] sizes, long block, boolean inner) {
        int split = sizes.length;
        if (block > 0) {
            long p = 1;
            while (p < block) p *= sizes[--split];
        }
        return inner ? new int[] {split, sizes.length} : new int[] {0, split};
    }
}
