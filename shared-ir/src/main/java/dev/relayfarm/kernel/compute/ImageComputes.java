package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.image.GridSample;
import dev.relayfarm.ops.image.Resize2D;
import dev.relayfarm.ops.image.Resize2D.CoordMode;
import dev.relayfarm.ops.image.Resize2D.Rounding;
import dev.relayfarm.ops.nn.Layout;
import java.util.ArrayList;
import java.util.List;

/**
 * The compute rule of {@code image.resize2d}: every method (nearest_neighbor, linear, cubic with
 * cubic_alpha and cubic_exclude), coordinate transformation mode and rounding method the interpreter
 * has, ONNX scales included, in any permutation of NCHW. Each output element maps its row and column
 * to input coordinates with the interpreter's float64 arithmetic, operation for operation (the C
 * compiler runs in ISO mode: no contraction into FMAs), so the taps chosen are the same; the taps are
 * clamped to the image, and tf_crop_and_resize gives extrapolation_value outside it.
 * <pre>
 * image.resize2d(%x: Tensor[(1, 3, 4, 4)], size=[8, 8])   (linear, half_pixel)
 *   ==> iy = (y + 0.5) * 0.5 - 0.5;  y0 = floor(iy);  out = lerp(lerp(x[y0, x0], x[y0, x0+1]), lerp(...), iy - y0)
 * </pre>
 */
final class ImageComputes {
    private ImageComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("image.resize2d", ImageComputes::resize2d);
        r.add("image.grid_sample", ImageComputes::gridSample);
    }

    private static PrimExpr d(double v) {
        return new FloatImm(v, DType.FLOAT64);
    }

    private static PrimExpr f64(PrimExpr v) {
        return v.dtype().equals(DType.FLOAT64) ? v : new Cast(DType.FLOAT64, v);
    }

    private static PrimExpr fn(MathFn f, PrimExpr v) {
        return new Call(f, List.of(v));
    }

    private static PrimExpr div(PrimExpr a, PrimExpr b) {
        return new Binary(BinaryOp.DIV, a, b);
    }

    /** Resize2D.inputCoord as an expression of the output coordinate {@code x} (int). */
    private static PrimExpr inputCoord(PrimExpr x, int in, int out, CoordMode mode, double start, double end, double userScale) {
        double scale = userScale > 0 ? 1 / userScale : (double) in / out;
        PrimExpr xd = f64(x);
        return switch (mode) {
            case HALF_PIXEL -> xd.add(d(0.5)).mul(d(scale)).sub(d(0.5));
            case HALF_PIXEL_SYMMETRIC -> {
                double adjustment = userScale > 0 ? out / (userScale * in) : 1;
                yield d(in / 2.0 * (1 - adjustment)).add(xd.add(d(0.5)).mul(d(scale))).sub(d(0.5));
            }
            case ALIGN_CORNERS -> {
                double length = userScale > 0 ? in * userScale : out;
                yield length > 1 ? d((in - 1) / (length - 1)).mul(xd) : d(0);
            }
            case ASYMMETRIC -> d(scale).mul(xd);
            case PYTORCH_HALF_PIXEL -> out > 1 ? xd.add(d(0.5)).mul(d(scale)).sub(d(0.5)) : d(0);
            case TF_HALF_PIXEL_FOR_NN -> xd.add(d(0.5)).mul(d(scale));
            case TF_CROP_AND_RESIZE -> out > 1
                    ? d(start * (in - 1)).add(div(xd.mul(d(end - start)).mul(d(in - 1)), d(out - 1)))
                    : d(0.5 * (start + end) * (in - 1));
        };
    }

    /** Resize2D.closest: the rounded coordinate, as a float64 holding an integer. */
    private static PrimExpr closest(PrimExpr v, Rounding r) {
        return switch (r) {
            case ROUND -> fn(MathFn.RINT, v);
            case ROUND_PREFER_FLOOR -> fn(MathFn.CEIL, v.sub(d(0.5)));
            case ROUND_PREFER_CEIL -> fn(MathFn.FLOOR, v.add(d(0.5)));
            case FLOOR -> fn(MathFn.FLOOR, v.add(d(1e-5)));
            case CEIL -> fn(MathFn.CEIL, v.sub(d(1e-5)));
        };
    }

    /** An index from a float64 holding an integer (Java's (int) cast truncates as C's does). */
    private static PrimExpr toIndex(PrimExpr v) {
        return new Cast(DType.INT64, v);
    }

    private static PrimExpr clamp(PrimExpr i, int n) {
        return i.max(PrimExpr.of(0)).min(PrimExpr.of(n - 1));
    }

    /** Keys' cubic weights for the taps at -1, 0, 1, 2 from the floor, as Resize2D.cubicWeights orders the arithmetic. */
    private static PrimExpr[] cubicWeights(PrimExpr t, double alpha) {
        PrimExpr t2 = t.mul(t), t3 = t2.mul(t);
        return new PrimExpr[] {
            d(alpha).mul(t3.sub(d(2).mul(t2)).add(t)),
            d(alpha + 2).mul(t3).sub(d(3 + alpha).mul(t2)).add(d(1)),
            d(-(alpha + 2)).mul(t3).add(d(3 + 2 * alpha).mul(t2)).sub(d(alpha).mul(t)),
            d(-alpha).mul(t3).add(d(alpha).mul(t2))};
    }

    /** Resize2D.renormalize: taps outside [0, n) weigh 0, the rest are divided by their sum. */
    private static PrimExpr[] renormalize(PrimExpr[] w, PrimExpr start, int n) {
        PrimExpr[] out = new PrimExpr[4];
        PrimExpr sum = null;
        for (int i = 0; i < 4; i++) {
            PrimExpr at = start.add(PrimExpr.of(i - 1));
            out[i] = new Select(at.ge(PrimExpr.of(0)).and(at.lt(PrimExpr.of(n))), w[i], d(0));
            sum = sum == null ? out[i] : sum.add(out[i]);
        }
        for (int i = 0; i < 4; i++) out[i] = div(out[i], sum);
        return out;
    }

    private static List<Compute> resize2d(OpCall c) {
        Tensor x = c.in(0);
        Resize2D.Resize2DAttrs a = c.attrs(Resize2D.Resize2DAttrs.class);
        Layout l = a.layout();
        int[] pos = l.pos();
        int h = x.shape().get(pos[2]), w = x.shape().get(pos[3]), oh = a.size()[0], ow = a.size()[1];
        DType outType = c.outDtype();
        double[] roi = a.roi();
        double scaleH = a.scales() == null ? 0 : a.scales()[0], scaleW = a.scales() == null ? 0 : a.scales()[1];
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr n = ix.get(pos[0]), ch = ix.get(pos[1]);
            PrimExpr iy = inputCoord(ix.get(pos[2]), h, oh, a.coordMode(), roi[0], roi[2], scaleH);
            PrimExpr ixx = inputCoord(ix.get(pos[3]), w, ow, a.coordMode(), roi[1], roi[3], scaleW);
            java.util.function.BiFunction<PrimExpr, PrimExpr, PrimExpr> px = (yy, xx) -> {
                PrimExpr[] canon = {n, ch, clamp(yy, h), clamp(xx, w)};
                List<PrimExpr> at = new ArrayList<>(List.of(canon));
                for (int i = 0; i < 4; i++) at.set(pos[i], canon[i]);
                return f64(x.at(at));
            };
            PrimExpr value = switch (a.method()) {
                case NEAREST -> {
                    Rounding rd = a.coordMode() == CoordMode.TF_CROP_AND_RESIZE ? Rounding.ROUND : a.rounding();
                    yield px.apply(toIndex(closest(iy, rd)), toIndex(closest(ixx, rd)));
                }
                case LINEAR -> {
                    PrimExpr fy = fn(MathFn.FLOOR, iy), fx = fn(MathFn.FLOOR, ixx);
                    PrimExpr y0 = toIndex(fy), x0 = toIndex(fx), ty = iy.sub(fy), tx = ixx.sub(fx);
                    PrimExpr top = lerp(px.apply(y0, x0), px.apply(y0, x0.add(1)), tx);
                    PrimExpr bottom = lerp(px.apply(y0.add(1), x0), px.apply(y0.add(1), x0.add(1)), tx);
                    yield lerp(top, bottom, ty);
                }
                case CUBIC -> {
                    PrimExpr fy = fn(MathFn.FLOOR, iy), fx = fn(MathFn.FLOOR, ixx);
                    PrimExpr y0 = toIndex(fy), x0 = toIndex(fx);
                    PrimExpr[] wy = cubicWeights(iy.sub(fy), a.cubicAlpha()), wx = cubicWeights(ixx.sub(fx), a.cubicAlpha());
                    if (a.cubicExclude()) {
                        wy = renormalize(wy, y0, h);
                        wx = renormalize(wx, x0, w);
                    }
                    PrimExpr acc = null;
                    for (int j = 0; j < 4; j++) {
                        PrimExpr row = null;
                        for (int i = 0; i < 4; i++) {
                            PrimExpr term = px.apply(y0.add(j - 1), x0.add(i - 1)).mul(wx[i]);
                            row = row == null ? term : row.add(term);
                        }
                        PrimExpr term = row.mul(wy[j]);
                        acc = acc == null ? term : acc.add(term);
                    }
                    yield acc;
                }
            };
            if (a.coordMode() == CoordMode.TF_CROP_AND_RESIZE) {
                PrimExpr outside = iy.lt(d(0)).or(iy.gt(d(h - 1))).or(ixx.lt(d(0))).or(ixx.gt(d(w - 1)));
                value = new Select(outside, d(a.extrapolationValue()), value);
            }
            return ElementwiseComputes.cast(outType.isFloat() || outType.isBool() ? value : new Cast(DType.INT64, value), outType);
        }));
    }

    /** {@code a * (1 - t) + b * t}, as the interpreter's lerp. */
    private static PrimExpr lerp(PrimExpr a, PrimExpr b, PrimExpr t) {
        return a.mul(d(1.0).sub(t)).add(b.mul(t));
    }

    /**
     * image.grid_sample as GridSample.compute, operation for operation, in three stages so that the
     * C source stays small (an expression is inlined wherever it is used): per spatial axis i,
     * {@code _coord<i>[n, out...]} is the grid coordinate denormalized, rounded (nearest) and clamped
     * or reflected when outside the border; {@code _tap<i>[n, t, out...]} the pixel index tap t reads
     * (-1 for a zero-padded tap) and {@code _weight<i>[n, t, out...]} its weight. The output sums weight
     * products times pixels over the tap grid in the interpreter's order (last axis fastest); a
     * zero-padded tap loads a clamped index and is selected away, so no load leaves the tensor.
     */
    private static List<Compute> gridSample(OpCall c) {
        Tensor x = c.in(0), g = c.in(1);
        GridSample.GridSampleAttrs a = c.attrs(GridSample.GridSampleAttrs.class);
        int sp = a.spatial();
        int taps = switch (a.method()) {
            case NEAREST -> 1;
            case BILINEAR -> 2;
            case BICUBIC -> 4;
        };
        List<Integer> outShape = c.outShape();
        List<Integer> pointShape = new ArrayList<>();
        pointShape.add(outShape.get(0));
        pointShape.addAll(outShape.subList(2, outShape.size()));
        List<Integer> tapShape = new ArrayList<>(pointShape);
        tapShape.add(1, taps);
        Compute[] tapIdx = new Compute[sp], tapWeight = new Compute[sp];
        for (int i = 0; i < sp; i++) {
            int axis = i, n = x.shape().get(2 + i);
            double lo = a.alignCorners() ? 0 : -0.5, hi = a.alignCorners() ? n - 1 : n - 0.5;
            Compute coord = Te.compute(c.name() + "_coord" + i, pointShape, ix -> {
                List<PrimExpr> at = new ArrayList<>(ix);
                at.add(1, PrimExpr.of(sp - 1 - axis));
                PrimExpr norm = f64(g.at(at));
                PrimExpr v = a.alignCorners() ? div(norm.add(d(1)), d(2.0)).mul(d(n - 1)) : div(norm.add(d(1)).mul(d(n)).sub(d(1)), d(2.0));
                if (a.method() == GridSample.Method.NEAREST) v = fn(MathFn.RINT, v);
                PrimExpr outside = v.lt(d(lo)).or(v.gt(d(hi)));
                return switch (a.padding()) {
                    case ZEROS -> v;
                    case BORDER -> new Select(outside, clampD(v, 0, n - 1), v);
                    case REFLECTION -> reflect(v, lo, hi);
                };
            });
            // the first tap: the coordinate itself (nearest), its floor (bilinear) or floor - 1 (bicubic)
            java.util.function.Function<PrimExpr, PrimExpr> first = v -> switch (a.method()) {
                case NEAREST -> toIndex(v);
                case BILINEAR -> toIndex(fn(MathFn.FLOOR, v));
                case BICUBIC -> toIndex(fn(MathFn.FLOOR, v)).sub(1);
            };
            tapIdx[i] = Te.compute(c.name() + "_tap" + i, tapShape, ix -> {
                List<PrimExpr> at = new ArrayList<>(ix);
                PrimExpr t = at.remove(1);
                PrimExpr tap = first.apply(coord.at(at)).add(t);
                return switch (a.padding()) {
                    case ZEROS -> new Select(tap.ge(0).and(tap.lt(PrimExpr.of(n))), tap, PrimExpr.of(-1));
                    case BORDER -> clamp(tap, n);
                    case REFLECTION -> clamp(toIndex(reflect(f64(tap), lo, hi)), n);
                };
            });
            tapWeight[i] = Te.compute(c.name() + "_weight" + i, tapShape, ix -> {
                List<PrimExpr> at = new ArrayList<>(ix);
                PrimExpr t = at.remove(1);
                PrimExpr v = coord.at(at);
                PrimExpr[] w = switch (a.method()) {
                    case NEAREST -> new PrimExpr[] {d(1)};
                    case BILINEAR -> {
                        PrimExpr frac = v.sub(fn(MathFn.FLOOR, v));
                        yield new PrimExpr[] {d(1).sub(frac), frac};
                    }
                    case BICUBIC -> gridCubicWeights(v.sub(fn(MathFn.FLOOR, v)));
                };
                PrimExpr sel = w[w.length - 1];
                for (int k = w.length - 2; k >= 0; k--) sel = new Select(new Binary(BinaryOp.EQ, t, PrimExpr.of(k)), w[k], sel);
                return sel;
            });
        }
        int combos = 1;
        for (int i = 0; i < sp; i++) combos *= taps;
        int allTaps = combos;
        DType outType = c.outDtype();
        return List.of(Te.compute(c.name(), outShape, ix -> {
            PrimExpr acc = d(0);
            for (int k = 0; k < allTaps; k++) {
                PrimExpr w = d(1);
                PrimExpr ok = null;
                PrimExpr[] at = new PrimExpr[sp + 2];
                at[0] = ix.get(0);
                at[1] = ix.get(1);
                for (int i = sp - 1, rest = k; i >= 0; i--, rest /= taps) {
                    List<PrimExpr> tapAt = new ArrayList<>();
                    tapAt.add(ix.get(0));
                    tapAt.add(PrimExpr.of(rest % taps));
                    tapAt.addAll(ix.subList(2, ix.size()));
                    w = w.mul(tapWeight[i].at(tapAt));
                    PrimExpr idx = tapIdx[i].at(tapAt);
                    if (a.padding() == GridSample.Padding.ZEROS) {
                        ok = ok == null ? idx.ge(0) : ok.and(idx.ge(0));
                        idx = idx.max(PrimExpr.of(0));
                    }
                    at[2 + i] = idx;
                }
                PrimExpr px = f64(x.at(List.of(at)));
                acc = acc.add(w.mul(ok == null ? px : new Select(ok, px, d(0))));
            }
            return ElementwiseComputes.cast(acc, outType);
        }));
    }

    private static PrimExpr clampD(PrimExpr v, double lo, double hi) {
        return new Select(v.lt(d(lo)), d(lo), new Select(v.gt(d(hi)), d(hi), v));
    }

    /** GridSample.reflect: folds {@code v} into [lo, hi] (unchanged inside), the interpreter's arithmetic. */
    private static PrimExpr reflect(PrimExpr v, double lo, double hi) {
        double range = hi - lo;
        if (range <= 0) return d(lo);
        PrimExpr below = v.lt(d(lo));
        PrimExpr dx = new Select(below, d(lo).sub(v), v.sub(d(hi)));
        PrimExpr flips = fn(MathFn.TRUNC, div(dx, d(range)));
        PrimExpr r = dx.sub(flips.mul(d(range)));
        PrimExpr even = new Binary(BinaryOp.EQ, new Call(MathFn.FMOD, List.of(flips, d(2))), d(0));
        PrimExpr folded = new Select(below, new Select(even, d(lo).add(r), d(hi).sub(r)), new Select(even, d(hi).sub(r), d(lo).add(r)));
        return new Select(below.or(v.gt(d(hi))), folded, v);
    }

    /** GridSample.cubicWeights (Keys, alpha -0.75) for fraction {@code t}, same operation order. */
    private static PrimExpr[] gridCubicWeights(PrimExpr t) {
        double al = -0.75;
        PrimExpr x0 = t.add(d(1)), x2 = d(1).sub(t), x3 = d(2).sub(t);
        return new PrimExpr[] {
            d(al).mul(x0).sub(d(5 * al)).mul(x0).add(d(8 * al)).mul(x0).sub(d(4 * al)),
            d(al + 2).mul(t).sub(d(al + 3)).mul(t).mul(t).add(d(1)),
            d(al + 2).mul(x2).sub(d(al + 3)).mul(x2).mul(x2).add(d(1)),
            d(al).mul(x3).sub(d(5 * al)).mul(x3).add(d(8 * al)).mul(x3).sub(d(4 * al))};
    }
}
