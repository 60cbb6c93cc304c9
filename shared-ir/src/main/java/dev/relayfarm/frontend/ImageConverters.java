package dev.relayfarm.frontend;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.Arrays;
import java.util.List;

/** ONNX image-resampling operators: Resize (opsets 10-19) and Upsample, mapped to image.resize2d. */
final class ImageConverters {
    private ImageConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Resize", ImageConverters::resize);
        b.add("Upsample", ImageConverters::upsample);
    }

    /** Upsample (opsets 7-9): scales as attribute (7) or input (9); nearest repeats pixels, linear is asymmetric. */
    private static List<Expr> upsample(OnnxNode n) {
        double[] scales;
        if (n.opset() < 9) {
            float[] f = n.attrFloats("scales");
            if (f == null) throw n.unsupported("attribute 'scales' is required");
            scales = new double[f.length];
            for (int i = 0; i < f.length; i++) scales[i] = f[i];
        } else {
            scales = constantDoubles(n, 1, "scales");
        }
        String mode = n.attrString("mode", "nearest");
        TensorType t = n.inputType(0);
        long[] sizes = new long[t.rank()];
        for (int i = 0; i < t.rank(); i++) sizes[i] = scales[i] == 1 ? -1 : (long) Math.floor(staticDim(n, t, i) * scales[i]);
        return List.of(resize2d(n, t, sizes, scales, mode, "asymmetric", null, -0.75, false, 0, null));
    }

    private static List<Expr> resize(OnnxNode n) {
        TensorType t = n.inputType(0);
        int rank = t.rank();
        String mode = n.attrString("mode", "nearest");
        String coord = n.opset() < 11 ? "asymmetric" : n.attrString("coordinate_transformation_mode", "half_pixel");
        // Opset 10 had no nearest_mode: it truncates when upsampling and rounds up when downsampling (see legacyNearest).
        String nearest = n.opset() < 11 ? null : n.attrString("nearest_mode", "round_prefer_floor");
        double cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
        boolean exclude = n.attrInt("exclude_outside", 0) != 0;
        double extrapolation = n.attrFloat("extrapolation_value", 0f);
        boolean antialias = n.attrInt("antialias", 0) != 0;
        String policy = n.attrString("keep_aspect_ratio_policy", "stretch");
        long[] axes = n.attrInts("axes");
        if (axes == null) {
            axes = new long[rank];
            for (int i = 0; i < rank; i++) axes[i] = i;
        }
        axes = Arrays.stream(axes).map(a -> a < 0 ? a + rank : a).toArray();
        int scalesInput = n.opset() < 11 ? 1 : 2;
        double[] roi = null;
        if (n.opset() >= 11 && n.hasInput(1)) {
            double[] r = constantDoubles(n, 1, "roi");
            if (r.length > 0) roi = r;
        }
        double[] given = n.hasInput(scalesInput) ? constantDoubles(n, scalesInput, "scales") : new double[0];
        long[] givenSizes = n.opset() >= 11 && n.hasInput(3) ? n.constantInts(3, "sizes") : new long[0];
        if (given.length > 0 && givenSizes.length > 0) throw n.unsupported("only one of 'scales' and 'sizes' may be given");
        if (given.length == 0 && givenSizes.length == 0) throw n.unsupported("one of 'scales' and 'sizes' is required");
        int k = axes.length;
        double[] scales = new double[rank];
        long[] sizes = new long[rank];
        Arrays.fill(scales, 1);
        for (int i = 0; i < rank; i++) sizes[i] = -1;
        if (given.length > 0) {
            if (given.length != k) throw n.unsupported("scales has " + given.length + " values for " + k + " axes");
            for (int i = 0; i < k; i++) scales[(int) axes[i]] = given[i];
            for (int i = 0; i < rank; i++) {
                if (scales[i] == 1 && !coord.equals("tf_crop_and_resize")) continue; // an untouched axis may be dynamic
                double extent = 1;
                if (coord.equals("tf_crop_and_resize") && roi != null) extent = roiEnd(roi, axes, i, rank) - roiStart(roi, axes, i, rank);
                sizes[i] = (long) Math.floor(staticDim(n, t, i) * extent * scales[i]);
            }
        } else {
            if (givenSizes.length != k) throw n.unsupported("sizes has " + givenSizes.length + " values for " + k + " axes");
            if (policy.equals("stretch")) {
                for (int i = 0; i < k; i++) {
                    int a = (int) axes[i];
                    sizes[a] = givenSizes[i];
                    if (!t.shape().get(a).equals(Dim.of(givenSizes[i]))) scales[a] = (double) givenSizes[i] / staticDim(n, t, a);
                }
            } else {
                // One scale for all resized axes: the largest that fits (not_larger) or covers (not_smaller).
                boolean notLarger = switch (policy) {
                    case "not_larger" -> true;
                    case "not_smaller" -> false;
                    default -> throw n.unsupported("keep_aspect_ratio_policy=" + policy + " is not supported");
                };
                double s = notLarger ? Double.POSITIVE_INFINITY : 0;
                for (int i = 0; i < k; i++) {
                    double r = (double) givenSizes[i] / staticDim(n, t, (int) axes[i]);
                    s = notLarger ? Math.min(s, r) : Math.max(s, r);
                }
                for (long a : axes) {
                    scales[(int) a] = s;
                    sizes[(int) a] = (long) Math.floor(s * staticDim(n, t, (int) a) + 0.5);
                }
            }
        }
        if (antialias && !mode.equals("nearest")) return List.of(antialiased(n, t, sizes, scales, mode, coord, cubicA, exclude));
        return List.of(resize2d(n, t, sizes, scales, mode, coord, nearest, cubicA, exclude, extrapolation, roi == null ? null : new double[] {
                roiStart(roi, axes, rank - 2, rank), roiStart(roi, axes, rank - 1, rank), roiEnd(roi, axes, rank - 2, rank), roiEnd(roi, axes, rank - 1, rank)}));
    }

    /**
     * Resize with antialias=1 in linear or cubic mode: separable, so each resized axis is a product
     * with a constant [out, in] interpolation matrix (innermost axis first, as the spec's reference
     * interpolates). When shrinking by scale s &lt; 1 the filter is widened by 1/s: output x reads the
     * source coordinate x' of the coordinate transformation, r = x' − ⌈x'⌉ + 1 ∈ (0, 1], and weights
     * the input pixels ⌈x'⌉ − 1 + i, i ∈ [start, 1 − start], by f((i − r)·s) normalized to sum 1
     * (f the triangle or the cubic kernel, start = ⌊−1/s⌋ + 1 or ⌊−2/s⌋ + 1); pixels outside the image
     * repeat the edge pixel, or with exclude_outside get weight 0 before normalizing. Growing axes
     * (s ≥ 1) use the plain filter, nearest mode ignores antialias. tf_crop_and_resize (its
     * extrapolation value is not a linear map) is not supported here.
     */
    private static Expr antialiased(OnnxNode n, TensorType t, long[] sizes, double[] scales, String mode, String coord, double cubicA,
                                    boolean exclude) {
        boolean cubic = switch (mode) {
            case "linear" -> false;
            case "cubic" -> true;
            default -> throw n.unsupported("mode=" + mode + " is not supported");
        };
        if (!List.of("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric", "align_corners", "asymmetric").contains(coord)) {
            throw n.unsupported("antialias=1 with coordinate_transformation_mode=" + coord + " is not supported");
        }
        int rank = t.rank();
        Expr x = n.input(0);
        for (int axis = rank - 1; axis >= 0; axis--) {
            if (unchanged(t, axis, sizes[axis], scales[axis])) continue;
            int in = Math.toIntExact(staticDim(n, t, axis));
            int out = Math.toIntExact(sizes[axis] < 0 ? in : sizes[axis]);
            if ((long) in * out > SpatialConverters.MAX_TABLE) throw n.unsupported("the interpolation matrix of axis " + axis + " would be " + out + "x" + in);
            double[] w = interpolationMatrix(in, out, scales[axis], coord, cubic, cubicA, exclude);
            Expr m = OnnxNode.constant(NDArray.fromDoubles(t.dtype(), new int[] {out, in}, w));
            long[] perm = new long[rank];
            for (int i = 0; i < rank; i++) perm[i] = i;
            perm[axis] = rank - 1;
            perm[rank - 1] = axis;
            Expr moved = axis == rank - 1 ? x : n.call("transpose", List.of(x), "axes", perm);
            Expr y = n.call("nn.dense", moved, m);
            x = axis == rank - 1 ? y : n.call("transpose", List.of(y), "axes", perm);
        }
        return x;
    }

    /** The [out, in] row-major weights of one axis for {@link #antialiased}. */
    static double[] interpolationMatrix(int in, int out, double scale, String coord, boolean cubic, double a, boolean exclude) {
        double[] w = new double[out * in];
        double s = Math.min(scale, 1);
        int start = (int) Math.floor((cubic ? -2 : -1) / s) + 1;
        int taps = 2 - 2 * start;
        double outWidth = scale * in;
        for (int o = 0; o < out; o++) {
            double src = switch (coord) {
                case "align_corners" -> out == 1 ? 0 : (double) o * (in - 1) / (out - 1);
                case "asymmetric" -> o / scale;
                case "pytorch_half_pixel" -> out == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
                case "half_pixel_symmetric" -> in / 2.0 * (1 - out / outWidth) + (o + 0.5) / scale - 0.5;
                default -> (o + 0.5) / scale - 0.5; // half_pixel
            };
            double base = Math.floor(src);
            double r = src == base ? 1 : src - base;
            long first = (long) (src == base ? base - 1 : base); // the pixel at i = 0
            double[] c = new double[taps];
            double sum = 0;
            for (int i = 0; i < taps; i++) {
                double z = Math.abs((start + i - r) * s);
                c[i] = cubic ? cubicKernel(z, a) : Math.max(0, 1 - z);
                long pixel = first + start + i;
                if (exclude && (pixel < 0 || pixel >= in)) c[i] = 0;
                sum += c[i];
            }
            for (int i = 0; i < taps; i++) {
                long pixel = Math.clamp(first + start + i, 0, in - 1);
                w[o * in + (int) pixel] += sum == 0 ? 0 : c[i] / sum;
            }
        }
        return w;
    }

    private static double cubicKernel(double z, double a) {
        if (z <= 1) return ((a + 2) * z - (a + 3)) * z * z + 1;
        if (z < 2) return ((a * z - 5 * a) * z + 8 * a) * z - 4 * a;
        return 0;
    }

    /** roi lists starts then ends for the resized axes (all axes when {@code axes} is absent). */
    private static double roiStart(double[] roi, long[] axes, int axis, int rank) {
        for (int i = 0; i < axes.length; i++) if (axes[i] == axis) return roi[i];
        return 0;
    }

    private static double roiEnd(double[] roi, long[] axes, int axis, int rank) {
        for (int i = 0; i < axes.length; i++) if (axes[i] == axis) return roi[i + axes.length];
        return 1;
    }

    /** Only the last two axes of an NCHW tensor may change; resizing other axes is not supported. */
    private static Expr resize2d(OnnxNode n, TensorType t, long[] sizes, double[] scales, String mode, String coord, String nearest,
                                 double cubicA, boolean exclude, double extrapolation, double[] roi) {
        int rank = t.rank();
        for (int i = 0; i < Math.min(rank, rank == 4 ? 2 : rank); i++) {
            if (!unchanged(t, i, sizes[i], scales[i])) {
                throw n.unsupported(rank == 4 ? "resizing axis " + i + " (only the spatial axes 2 and 3 are supported)"
                        : "resizing a rank-" + rank + " tensor (only 4-D NCHW is supported)");
            }
        }
        if (rank != 4) return n.input(0);
        for (int i = 2; i < 4; i++) if (sizes[i] < 0) sizes[i] = staticDim(n, t, i);
        if (nearest == null) nearest = legacyNearest(n, scales);
        String method = switch (mode) {
            case "nearest" -> "nearest_neighbor";
            case "linear", "bilinear" -> "linear";
            case "cubic", "bicubic" -> "cubic";
            default -> throw n.unsupported("mode=" + mode + " is not supported");
        };
        return n.call("image.resize2d", List.of(n.input(0)), "size", new long[] {sizes[2], sizes[3]}, "scales", new double[] {scales[2], scales[3]},
                "roi", roi == null ? new double[] {0, 0, 1, 1} : roi, "method", method, "coordinate_transformation_mode", coord,
                "rounding_method", nearest, "cubic_alpha", cubicA, "cubic_exclude", exclude ? 1L : 0L, "extrapolation_value", extrapolation);
    }

    /**
     * Upsample and Resize-10 pick the nearest pixel by truncating the source coordinate when enlarging
     * and by rounding it up when shrinking (what the backends that produced their test data do).
     */
    private static String legacyNearest(OnnxNode n, double[] scales) {
        boolean up = scales[2] >= 1, up2 = scales[3] >= 1;
        if (up != up2) throw n.unsupported("nearest resize that enlarges one axis and shrinks the other (opset < 11) is not supported");
        return up ? "floor" : "ceil";
    }

    /** Scale 1 and the same size (or no size: -1); the dim itself may be dynamic. */
    private static boolean unchanged(TensorType t, int axis, long size, double scale) {
        return scale == 1 && (size < 0 || t.shape().get(axis).equals(Dim.of(size)));
    }

    private static long staticDim(OnnxNode n, TensorType t, int i) {
        Dim d = t.shape().get(i);
        if (!d.isStatic()) throw n.unsupported("input dim " + i + " is dynamic (" + d + "); resizing needs static input dims");
        return d.value();
    }

    static double[] constantDoubles(OnnxNode n, int i, String what) {
        NDArray a = n.requireConstant(i, what);
        double[] out = new double[a.elementCount()];
        for (int k = 0; k < out.length; k++) out[k] = a.getDouble(k);
        return out;
    }
}
