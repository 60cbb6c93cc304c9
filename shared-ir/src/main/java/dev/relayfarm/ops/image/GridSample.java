package dev.relayfarm.ops.image;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Arrays2;
import dev.relayfarm.ops.nn.Rel;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code image.grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros",
 * align_corners=False)} as TVM: data is {@code [N, C, H, W]} (or {@code [N, C, D, H, W]} with layout
 * NCDHW), the grid is channel-first, {@code [N, 2, H', W']} (or {@code [N, 3, D', H', W']}), holding
 * normalized coordinates in [-1, 1] ordered x (the W axis), y, z; the output is {@code [N, C, H', W']}.
 *
 * <p>The arithmetic is ONNX GridSample's reference: a coordinate is denormalized to
 * {@code (g + 1) / 2 * (L - 1)} with align_corners, else {@code ((g + 1) * L - 1) / 2}; nearest rounds it
 * half to even; outside the border ([0, L-1] aligned, [-0.5, L-0.5] not) "border" clamps it to
 * [0, L-1] and "reflection" reflects it back. The taps (2 per axis for bilinear, 4 for bicubic, with
 * Keys' kernel at alpha -0.75) then read 0 outside the image for "zeros", the clamped pixel for
 * "border" and the reflected one for "reflection". Interpolation is separable, so the n-D result is
 * the sum over the tap grid of the product of per-axis weights.
 */
public final class GridSample {
    public static final String NAME = "image.grid_sample";

    /** Keys' cubic parameter that PyTorch (and so ONNX and TVM) use for bicubic grid sampling. */
    static final double CUBIC_ALPHA = -0.75;

    private GridSample() {}

    public enum Method { NEAREST, BILINEAR, BICUBIC }

    public enum Padding { ZEROS, BORDER, REFLECTION }

    /** {@code spatial} is 2 (NCHW) or 3 (NCDHW). */
    public record GridSampleAttrs(Method method, int spatial, Padding padding, boolean alignCorners) {}

    public static OpDef<GridSampleAttrs> def() {
        return new OpDef<>(NAME, 2, GridSample::parse, GridSample::relation, OpPattern.INJECTIVE,
                (in, a) -> List.of(compute(in.get(0), in.get(1), a)));
    }

    static GridSampleAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        String method = r.string("method", "bilinear");
        String layout = r.string("layout", "NCHW");
        String padding = r.string("padding_mode", "zeros");
        boolean align = r.bool("align_corners", false);
        r.finish();
        Method m = switch (method) {
            case "nearest" -> Method.NEAREST;
            case "bilinear", "linear" -> Method.BILINEAR;
            case "bicubic", "cubic" -> Method.BICUBIC;
            default -> throw new RelationException(NAME + ": method must be \"nearest\", \"bilinear\" or \"bicubic\", got \"" + method + "\"");
        };
        int spatial = switch (layout) {
            case "NCHW" -> 2;
            case "NCDHW" -> 3;
            default -> throw new RelationException(NAME + ": layout must be \"NCHW\" or \"NCDHW\", got \"" + layout + "\"");
        };
        Padding p = switch (padding) {
            case "zeros" -> Padding.ZEROS;
            case "border" -> Padding.BORDER;
            case "reflection" -> Padding.REFLECTION;
            default -> throw new RelationException(NAME + ": padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"" + padding + "\"");
        };
        // TVM has no volumetric bicubic (nor does PyTorch): keep the same contract
        if (spatial == 3 && m == Method.BICUBIC) throw new RelationException(NAME + ": bicubic is only supported for NCHW, not NCDHW");
        return new GridSampleAttrs(m, spatial, p, align);
    }

    static boolean relation(List<Type> types, int numInputs, GridSampleAttrs a, TypeReporter reporter) {
        int rank = a.spatial() + 2;
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), rank);
        TensorType grid = Rel.tensorOfRank(NAME, "grid", types.get(1), rank);
        if (data == null || grid == null) return false;
        if (!data.dtype().isFloat() || !grid.dtype().isFloat()) {
            throw new RelationException(NAME + ": data and grid must be floating point, got " + TypeFormat.format(data) + " and " + TypeFormat.format(grid));
        }
        if (Rel.surelyDiffer(data.shape().get(0), grid.shape().get(0))) {
            throw new RelationException(NAME + ": data and grid must have the same batch, got " + TypeFormat.format(data) + " and " + TypeFormat.format(grid));
        }
        if (Rel.surelyDiffer(grid.shape().get(1), Dim.of(a.spatial()))) {
            throw new RelationException(NAME + ": grid must have " + a.spatial() + " coordinates in axis 1, got " + TypeFormat.format(grid));
        }
        List<Dim> out = new ArrayList<>();
        out.add(data.shape().get(0));
        out.add(data.shape().get(1));
        out.addAll(grid.shape().subList(2, rank));
        reporter.assign(types.get(2), new TensorType(out, data.dtype()));
        return true;
    }

    static NDArray compute(NDArray data, NDArray grid, GridSampleAttrs a) {
        int sp = a.spatial();
        int n = data.dim(0), c = data.dim(1);
        // in[i], out[i]: extents of spatial axis i in order (D,) H, W
        int[] in = new int[sp], out = new int[sp];
        int inPlane = 1, outPlane = 1;
        for (int i = 0; i < sp; i++) {
            in[i] = data.dim(2 + i);
            out[i] = grid.dim(2 + i);
            inPlane *= in[i];
            outPlane *= out[i];
        }
        double[] v = Arrays2.doubles(data);
        double[] g = Arrays2.doubles(grid);
        double[] res = new double[n * c * outPlane];
        int taps = switch (a.method()) {
            case NEAREST -> 1;
            case BILINEAR -> 2;
            case BICUBIC -> 4;
        };
        // per output point: for each axis the tap indices (-1 = reads 0) and their weights
        int[][] idx = new int[sp][taps];
        double[][] wt = new double[sp][taps];
        int[] stride = new int[sp];
        for (int i = sp - 1, s = 1; i >= 0; i--) {
            stride[i] = s;
            s *= in[i];
        }
        int combos = 1;
        for (int i = 0; i < sp; i++) combos *= taps;
        for (int b = 0; b < n; b++) {
            for (int p = 0; p < outPlane; p++) {
                for (int i = 0; i < sp; i++) {
                    // grid channel 0 is x (the last axis): axis i reads channel sp - 1 - i
                    double norm = g[(b * sp + (sp - 1 - i)) * outPlane + p];
                    axisTaps(norm, in[i], a, idx[i], wt[i]);
                }
                for (int ch = 0; ch < c; ch++) {
                    int base = (b * c + ch) * inPlane;
                    double acc = 0;
                    // iterate the tap grid as a mixed-radix counter (axis sp-1 fastest)
                    for (int k = 0; k < combos; k++) {
                        double w = 1;
                        int off = 0;
                        boolean outside = false;
                        for (int i = sp - 1, rest = k; i >= 0; i--, rest /= taps) {
                            int t = rest % taps;
                            if (idx[i][t] < 0) {
                                outside = true;
                                break;
                            }
                            w *= wt[i][t];
                            off += idx[i][t] * stride[i];
                        }
                        if (!outside) acc += w * v[base + off];
                    }
                    res[(b * c + ch) * outPlane + p] = acc;
                }
            }
        }
        int[] shape = new int[sp + 2];
        shape[0] = n;
        shape[1] = c;
        System.arraycopy(out, 0, shape, 2, sp);
        return Arrays2.fromDoubles(data.dtype(), shape, res);
    }

    /** The taps one axis of length {@code len} reads for normalized coordinate {@code norm}, and their weights. */
    static void axisTaps(double norm, int len, GridSampleAttrs a, int[] idx, double[] wt) {
        double x = a.alignCorners() ? (norm + 1) / 2.0 * (len - 1) : ((norm + 1) * len - 1) / 2.0;
        if (a.method() == Method.NEAREST) x = Math.rint(x);
        double lo = a.alignCorners() ? 0 : -0.5, hi = a.alignCorners() ? len - 1 : len - 0.5;
        if (x < lo || x > hi) {
            x = switch (a.padding()) {
                case ZEROS -> x;
                case BORDER -> Math.max(0, Math.min(len - 1, x));
                case REFLECTION -> reflect(x, lo, hi);
            };
        }
        switch (a.method()) {
            case NEAREST -> {
                idx[0] = tap((int) x, len, lo, hi, a.padding());
                wt[0] = 1;
            }
            case BILINEAR -> {
                int x0 = (int) Math.floor(x);
                double t = x - x0;
                idx[0] = tap(x0, len, lo, hi, a.padding());
                idx[1] = tap(x0 + 1, len, lo, hi, a.padding());
                wt[0] = 1 - t;
                wt[1] = t;
            }
            case BICUBIC -> {
                int x0 = (int) Math.floor(x);
                cubicWeights(x - x0, wt);
                for (int j = 0; j < 4; j++) idx[j] = tap(x0 - 1 + j, len, lo, hi, a.padding());
            }
        }
    }

    /** The pixel index tap {@code i} reads, or -1 when it reads the zero padding. */
    private static int tap(int i, int len, double lo, double hi, Padding padding) {
        if (i >= 0 && i < len) return i;
        return switch (padding) {
            case ZEROS -> -1;
            case BORDER -> Math.max(0, Math.min(len - 1, i));
            // ONNX truncates the reflected tap toward zero; clamp in case a length-1 axis left it out
            case REFLECTION -> Math.max(0, Math.min(len - 1, (int) reflect(i, lo, hi)));
        };
    }

    /** Reflects {@code x} into [lo, hi] as often as needed (ONNX's _gs_reflect); a point range stays put. */
    static double reflect(double x, double lo, double hi) {
        double range = hi - lo;
        if (range <= 0) return lo;
        if (x >= lo && x <= hi) return x;
        double dx = x < lo ? lo - x : x - hi;
        int flips = (int) (dx / range);
        double r = dx - flips * range;
        boolean even = flips % 2 == 0;
        return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
    }

    /** Keys' weights for the taps at -1, 0, 1, 2 from the floor, fraction {@code t}, as ONNX computes them. */
    static void cubicWeights(double t, double[] w) {
        double al = CUBIC_ALPHA;
        double x = t + 1;
        w[0] = ((al * x - 5 * al) * x + 8 * al) * x - 4 * al;
        w[1] = ((al + 2) * t - (al + 3)) * t * t + 1;
        x = 1 - t;
        w[2] = ((al + 2) * x - (al + 3)) * x * x + 1;
        x = 2 - t;
        w[3] = ((al * x - 5 * al) * x + 8 * al) * x - 4 * al;
    }
}
