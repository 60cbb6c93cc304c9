package dev.relayfarm.ops.image;

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
import dev.relayfarm.ops.nn.Arrays2;
import dev.relayfarm.ops.nn.Layout;
import dev.relayfarm.ops.nn.Rel;
import java.util.List;

/**
 * {@code image.resize2d(data, size, roi=[0, 0, 0, 0], layout="NCHW", method="linear",
 * coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5, cubic_exclude=0,
 * extrapolation_value=0.0, out_dtype="", scales=None)} with TOPI's arithmetic: each output coordinate maps to an
 * input coordinate by the transformation mode; nearest rounds it (rounding_method, default floor, or
 * round with align_corners), linear interpolates the 2×2 neighbours, cubic the 4×4 with Keys' kernel
 * (cubic_alpha); neighbour indices are clamped to the image. Only tf_crop_and_resize can sample
 * outside the image, where it yields extrapolation_value.
 *
 * <p>{@code scales} ([scale_h, scale_w]) is an extension for ONNX Resize: ONNX maps coordinates
 * with the scale the user gave ({@code x / scale}), which differs from {@code x * in / out} whenever
 * {@code in * scale} is not an integer (a 0.6 downscale of width 4 has 2 outputs, but samples with
 * step 1/0.6, not 2). Without it the ratio of the sizes is used, as in TOPI.
 * {@code half_pixel_symmetric} (ONNX opset 19) is half_pixel re-centred by the rounding of the
 * output size.
 */
public final class Resize2D {
    public static final String NAME = "image.resize2d";

    private Resize2D() {}

    public enum Method { NEAREST, LINEAR, CUBIC }

    public enum CoordMode { HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, PYTORCH_HALF_PIXEL, TF_HALF_PIXEL_FOR_NN, TF_CROP_AND_RESIZE, HALF_PIXEL_SYMMETRIC }

    public enum Rounding { ROUND, FLOOR, CEIL, ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL }

    /**
     * {@code roi} is {start_h, start_w, end_h, end_w} (used by tf_crop_and_resize only); {@code scales}
     * is null or {scale_h, scale_w}.
     */
    public record Resize2DAttrs(int[] size, double[] roi, Layout layout, Method method, CoordMode coordMode, Rounding rounding,
                                double cubicAlpha, boolean cubicExclude, double extrapolationValue, DType outDtype, double[] scales) {}

    public static OpDef<Resize2DAttrs> def() {
        return new OpDef<>(NAME, 1, Resize2D::parse, Resize2D::relation, OpPattern.INJECTIVE, (in, a) -> List.of(compute(in.get(0), a)));
    }

    static Resize2DAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        if (!r.has("size")) throw new RelationException(NAME + ": attribute 'size' is required");
        int[] size = r.ints("size");
        double[] roi = r.reals("roi", 0, 0, 0, 0);
        String layout = r.string("layout", "NCHW");
        String method = r.string("method", "linear");
        String coord = r.string("coordinate_transformation_mode", "half_pixel");
        String rounding = r.string("rounding_method", "");
        double alpha = r.real("cubic_alpha", -0.5);
        boolean exclude = r.integer("cubic_exclude", 0) != 0;
        double extrapolation = r.real("extrapolation_value", 0.0);
        DType outDtype = r.dtype("out_dtype", null);
        double[] scales = r.has("scales") ? r.reals("scales") : null;
        r.finish();
        if (scales != null && (scales.length != 2 || !(scales[0] > 0) || !(scales[1] > 0))) {
            throw new RelationException(NAME + ": scales must be two positive numbers, got " + java.util.Arrays.toString(scales));
        }
        if (size.length != 2 || size[0] < 1 || size[1] < 1) {
            throw new RelationException(NAME + ": size must be two positive integers, got " + java.util.Arrays.toString(size));
        }
        if (roi.length != 4) throw new RelationException(NAME + ": roi must have 4 values, got " + roi.length);
        Method m = switch (method) {
            case "nearest_neighbor" -> Method.NEAREST;
            case "linear", "bilinear" -> Method.LINEAR;
            case "cubic", "bicubic" -> Method.CUBIC;
            default -> throw new RelationException(NAME + ": method must be \"nearest_neighbor\", \"linear\" or \"cubic\", got \"" + method + "\"");
        };
        CoordMode c = switch (coord) {
            case "half_pixel" -> CoordMode.HALF_PIXEL;
            case "align_corners" -> CoordMode.ALIGN_CORNERS;
            case "asymmetric" -> CoordMode.ASYMMETRIC;
            case "pytorch_half_pixel" -> CoordMode.PYTORCH_HALF_PIXEL;
            case "tf_half_pixel_for_nn" -> CoordMode.TF_HALF_PIXEL_FOR_NN;
            case "tf_crop_and_resize" -> CoordMode.TF_CROP_AND_RESIZE;
            case "half_pixel_symmetric" -> CoordMode.HALF_PIXEL_SYMMETRIC;
            default -> throw new RelationException(NAME + ": coordinate_transformation_mode \"" + coord + "\" is not one of half_pixel, "
                    + "align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn, tf_crop_and_resize, half_pixel_symmetric");
        };
        Rounding rd = switch (rounding) {
            // TOPI's default for nearest: round with align_corners, floor otherwise
            case "" -> c == CoordMode.ALIGN_CORNERS ? Rounding.ROUND : Rounding.FLOOR;
            case "round" -> Rounding.ROUND;
            case "floor" -> Rounding.FLOOR;
            case "ceil" -> Rounding.CEIL;
            case "round_prefer_floor" -> Rounding.ROUND_PREFER_FLOOR;
            case "round_prefer_ceil" -> Rounding.ROUND_PREFER_CEIL;
            default -> throw new RelationException(NAME + ": rounding_method \"" + rounding + "\" is not one of round, floor, ceil, "
                    + "round_prefer_floor, round_prefer_ceil");
        };
        return new Resize2DAttrs(size, roi, Layout.parse(NAME, "layout", layout, "NCHW"), m, c, rd, alpha, exclude, extrapolation, outDtype, scales);
    }

    static boolean relation(List<Type> types, int numInputs, Resize2DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), 4);
        if (data == null) return false;
        List<Dim> d = a.layout().toCanonical(data.shape());
        List<Dim> out = a.layout().fromCanonical(List.of(d.get(0), d.get(1), Dim.of(a.size()[0]), Dim.of(a.size()[1])));
        reporter.assign(types.get(1), new TensorType(out, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    /**
     * The input coordinate sampled for output coordinate {@code x} (TOPI's get_inx); {@code userScale}
     * is the ONNX scale (output / input) or 0 to use the ratio of the sizes.
     */
    static double inputCoord(int x, int in, int out, CoordMode mode, double start, double end, double userScale) {
        double scale = userScale > 0 ? 1 / userScale : (double) in / out;
        return switch (mode) {
            case HALF_PIXEL -> (x + 0.5) * scale - 0.5;
            case HALF_PIXEL_SYMMETRIC -> {
                // the output size was rounded down from in * scale: shift so the sampling stays centred
                double adjustment = userScale > 0 ? out / (userScale * in) : 1;
                yield in / 2.0 * (1 - adjustment) + (x + 0.5) * scale - 0.5;
            }
            case ALIGN_CORNERS -> {
                // ONNX aligns the corners of the unrounded output length in * scale
                double length = userScale > 0 ? in * userScale : out;
                yield length > 1 ? (in - 1) / (length - 1) * x : 0;
            }
            case ASYMMETRIC -> scale * x;
            case PYTORCH_HALF_PIXEL -> out > 1 ? (x + 0.5) * scale - 0.5 : 0;
            case TF_HALF_PIXEL_FOR_NN -> (x + 0.5) * scale;
            case TF_CROP_AND_RESIZE -> out > 1
                    ? start * (in - 1) + x * (end - start) * (in - 1) / (out - 1)
                    : 0.5 * (start + end) * (in - 1);
        };
    }

    /** TOPI's get_closest_index, epsilons included (they keep exact halves/integers stable). */
    static int closest(double v, Rounding r) {
        return (int) switch (r) {
            case ROUND -> Math.rint(v);
            case ROUND_PREFER_FLOOR -> Math.ceil(v - 0.5);
            case ROUND_PREFER_CEIL -> Math.floor(v + 0.5);
            case FLOOR -> Math.floor(v + 1e-5);
            case CEIL -> Math.ceil(v - 1e-5);
        };
    }

    static NDArray compute(NDArray input, Resize2DAttrs a) {
        NDArray x = Arrays2.permute(input, a.layout().toCanonicalAxes());
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), oh = a.size()[0], ow = a.size()[1];
        double[] v = Arrays2.doubles(x);
        double[] out = new double[n * c * oh * ow];
        double[] roi = a.roi();
        for (int p = 0; p < n * c; p++) {
            int base = p * h * w;
            for (int y = 0; y < oh; y++) {
                double iy = inputCoord(y, h, oh, a.coordMode(), roi[0], roi[2], a.scales() == null ? 0 : a.scales()[0]);
                for (int xx = 0; xx < ow; xx++) {
                    double ix = inputCoord(xx, w, ow, a.coordMode(), roi[1], roi[3], a.scales() == null ? 0 : a.scales()[1]);
                    double value;
                    if (a.coordMode() == CoordMode.TF_CROP_AND_RESIZE && (iy < 0 || iy > h - 1 || ix < 0 || ix > w - 1)) {
                        value = a.extrapolationValue();
                    } else {
                        value = switch (a.method()) {
                            case NEAREST -> {
                                // crop_and_resize always rounds (TOPI passes boxes)
                                Rounding rd = a.coordMode() == CoordMode.TF_CROP_AND_RESIZE ? Rounding.ROUND : a.rounding();
                                yield v[base + clamp(closest(iy, rd), h) * w + clamp(closest(ix, rd), w)];
                            }
                            case LINEAR -> {
                                int y0 = (int) Math.floor(iy), x0 = (int) Math.floor(ix);
                                double ty = iy - y0, tx = ix - x0;
                                double top = lerp(px(v, base, h, w, y0, x0), px(v, base, h, w, y0, x0 + 1), tx);
                                double bottom = lerp(px(v, base, h, w, y0 + 1, x0), px(v, base, h, w, y0 + 1, x0 + 1), tx);
                                yield lerp(top, bottom, ty);
                            }
                            case CUBIC -> cubic(v, base, h, w, iy, ix, a.cubicAlpha(), a.cubicExclude());
                        };
                    }
                    out[(p * oh + y) * ow + xx] = value;
                }
            }
        }
        DType outType = a.outDtype() != null ? a.outDtype() : x.dtype();
        NDArray res = Arrays2.fromDoubles(outType, new int[] {n, c, oh, ow}, out);
        return Arrays2.permute(res, a.layout().fromCanonicalAxes());
    }

    private static int clamp(int i, int n) {
        return Math.max(0, Math.min(n - 1, i));
    }

    private static double px(double[] v, int base, int h, int w, int y, int x) {
        return v[base + clamp(y, h) * w + clamp(x, w)];
    }

    private static double lerp(double a, double b, double t) {
        return a * (1.0 - t) + b * t;
    }

    /** Keys' cubic convolution weights for the four taps at offsets -1, 0, 1, 2 from floor. */
    static double[] cubicWeights(double t, double alpha) {
        double t2 = t * t, t3 = t2 * t;
        return new double[] {
                alpha * (t3 - 2 * t2 + t),
                (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
                -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
                -alpha * t3 + alpha * t2};
    }

    private static double cubic(double[] v, int base, int h, int w, double iy, double ix, double alpha, boolean exclude) {
        int y0 = (int) Math.floor(iy), x0 = (int) Math.floor(ix);
        double[] wy = cubicWeights(iy - y0, alpha), wx = cubicWeights(ix - x0, alpha);
        if (exclude) {
            // taps outside the image get weight 0 and the rest are renormalized
            renormalize(wy, y0, h);
            renormalize(wx, x0, w);
        }
        double acc = 0;
        for (int j = 0; j < 4; j++) {
            double row = 0;
            for (int i = 0; i < 4; i++) row += px(v, base, h, w, y0 - 1 + j, x0 - 1 + i) * wx[i];
            acc += row * wy[j];
        }
        return acc;
    }

    private static void renormalize(double[] wts, int start, int n) {
        double sum = 0;
        for (int i = 0; i < 4; i++) {
            int at = start - 1 + i;
            if (at < 0 || at >= n) wts[i] = 0;
            sum += wts[i];
        }
        for (int i = 0; i < 4; i++) wts[i] /= sum;
    }
}
