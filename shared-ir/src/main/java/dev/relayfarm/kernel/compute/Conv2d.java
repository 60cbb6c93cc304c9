package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nn.conv2d} in NCHW / OIHW layout:
 * {@code out[n, f, y, x] = sum_{rc, ry, rx} pad[n, g(f)*C/groups + rc, y*sh + ry*dh, x*sw + rx*dw] * w[f, rc, ry, rx]},
 * where {@code pad} is the zero-padded input (a stage of its own, absent when there is no padding),
 * {@code rc} runs over the {@code C/groups} input channels of output channel {@code f}'s group
 * {@code g(f) = f / (F/groups)} (groups = C: depthwise).
 *
 * <p>Not covered here: NHWC and the blocked NCHW[x]c layouts (rejected with a message, not miscomputed).
 */
public final class Conv2d {
    private Conv2d() {}

    public record Params(int strideH, int strideW, int padTop, int padLeft, int padBottom, int padRight, int dilationH, int dilationW) {
        public static Params of(int stride, int pad) {
            return new Params(stride, stride, pad, pad, pad, pad, 1, 1);
        }
    }

    /**
     * The kernel's stages: the padded (or widened) input (null when neither) and the output, the tile sizes, and the
     * most output columns a tile should take: 32 for a widening (8-bit) convolution, whose epilogue ends in an 8-bit
     * store, so 16 columns would again be a 16-byte vector and its float requantization four lanes wide; 16 otherwise.
     */
    public record Def(Compute pad, Compute out, int fb, int xb, int maxColumns) {}

    public static Def compute(Tensor data, Tensor weight, Params p, int groups) {
        return compute(data, weight, p, groups, null);
    }

    /**
     * With {@code outDtype} (an int8 x int8 -> int32 convolution, say): the operands are cast to it before they are
     * multiplied and summed, the data in its own stage ({@code pad}, padded or not); null or the data's dtype computes
     * in the data's dtype.
     */
    public static Def compute(Tensor data, Tensor weight, Params p, int groups, DType outDtype) {
        boolean widen = outDtype != null && !outDtype.equals(data.dtype());
        if (data.rank() != 4 || weight.rank() != 4) throw new IllegalArgumentException("conv2d needs NCHW data and OIHW weight, got " + data.shape() + " and " + weight.shape());
        int n = data.shape().get(0), c = data.shape().get(1), h = data.shape().get(2), w = data.shape().get(3);
        int f = weight.shape().get(0), groupChannels = weight.shape().get(1), kh = weight.shape().get(2), kw = weight.shape().get(3);
        if (groups < 1 || c % groups != 0 || f % groups != 0) {
            throw new IllegalArgumentException("conv2d: groups=" + groups + " must divide the " + c + " input and " + f + " output channels");
        }
        if (groupChannels * groups != c) {
            throw new IllegalArgumentException("conv2d: data has " + c + " channels, weight " + weight.shape() + " with groups=" + groups + " expects " + groupChannels * groups);
        }
        int groupOutputs = f / groups;
        int ph = h + p.padTop() + p.padBottom(), pw = w + p.padLeft() + p.padRight();
        int oh = (ph - (kh - 1) * p.dilationH() - 1) / p.strideH() + 1, ow = (pw - (kw - 1) * p.dilationW() - 1) / p.strideW() + 1;
        if (oh <= 0 || ow <= 0) throw new IllegalArgumentException("conv2d: kernel " + kh + "x" + kw + " does not fit the padded input " + ph + "x" + pw);
        boolean padded = p.padTop() + p.padBottom() + p.padLeft() + p.padRight() > 0;
        // A widening convolution always gets the stage, widened to the accumulator's dtype: the C compiler picks a
        // loop's vector length by its narrowest type, so int8 loads in the tile's loop made it 16 lanes of int8, i.e. a
        // quarter vector of int32 accumulators (about 4x slower than the same loop over int32 operands). The copy
        // costs one pass over the (padded) input; the weight, a broadcast scalar in that loop, stays 8-bit.
        Compute pad = !padded && !widen ? null : Te.compute("data_pad", List.of(n, c, ph, pw), List.of("pn", "pc", "ph", "pw"), ix -> {
            PrimExpr y = ix.get(2).sub(p.padTop()), x = ix.get(3).sub(p.padLeft());
            PrimExpr inside = y.ge(0).and(y.lt(PrimExpr.of(h))).and(x.ge(0)).and(x.lt(PrimExpr.of(w)));
            if (!padded) return ElementwiseComputes.cast(data.at(ix.get(0), ix.get(1), ix.get(2), ix.get(3)), outDtype);
            return widen ? new Select(inside, ElementwiseComputes.cast(data.at(ix.get(0), ix.get(1), y, x), outDtype), Te.zero(outDtype))
                    : new Select(inside, data.at(ix.get(0), ix.get(1), y, x), Te.zero(data.dtype()));
        });
        Tensor src = pad != null ? pad : data;
        IterVar rc = Te.reduceAxis("rc", groupChannels), ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        Compute out = Te.compute("conv2d", List.of(n, f, oh, ow), List.of("n", "f", "y", "x"), ix -> {
            PrimExpr d = src.at(ix.get(0), groups == 1 ? rc.var() : ix.get(1).div(groupOutputs).mul(groupChannels).add(rc.var()), ix.get(2).mul(p.strideH()).add(ry.var().mul(p.dilationH())),
                    ix.get(3).mul(p.strideW()).add(rx.var().mul(p.dilationW())));
            PrimExpr k = weight.at(ix.get(1), rc.var(), ry.var(), rx.var());
            return Te.sum(widen ? d.mul(ElementwiseComputes.cast(k, outDtype)) : d.mul(k), rc, ry, rx);
        });
        int xb = columnBlock(ow);
        int fb = Math.min(f, xb > 8 ? 4 : 8);
        return new Def(pad, out, fb, xb, widen ? 32 : 16);
    }

    /**
     * Output columns per tile: 16 or 8 when they divide the row, else the largest divisor in [7, 16]
     * (a ragged tile needs a guard inside the vector loop, which costs far more than a short vector),
     * else 16 with the guard.
     */
    static int columnBlock(int ow) {
        if (ow % 16 == 0) return 16;
        if (ow % 8 == 0) return 8;
        for (int b = 16; b >= 7; b--) if (ow % b == 0) return b;
        return Math.min(16, ow);
    }

    /**
     * Default schedule: an {@code fb x xb} tile of (output channel, output column) accumulated locally
     * at each output row, the reduction outermost within the tile, channels unrolled and columns
     * vectorized; (batch, channel block, row) fused and spread across threads. The padding stage is
     * parallel over (batch, channel) with its rows vectorized.
     */
    public static Schedule defaultSchedule(Def d) {
        String o = d.out().name(), local = o + "_local";
        List<Primitive> ps = new ArrayList<>();
        if (d.pad() != null) {
            String p = d.pad().name();
            ps.add(new Primitive.Fuse(p, "pn", "pc"));
            ps.add(new Primitive.Parallel(p, "pn_pc_f"));
            ps.add(new Primitive.Vectorize(p, "pw"));
        }
        ps.addAll(List.of(
                new Primitive.CacheWrite(o),
                new Primitive.Split(o, "f", d.fb()),
                new Primitive.Split(o, "x", d.xb()),
                new Primitive.Reorder(o, List.of("n", "f_o", "y", "x_o", "f_i", "x_i")),
                new Primitive.Fuse(o, "n", "f_o"),
                new Primitive.Fuse(o, "n_f_o_f", "y"),
                new Primitive.Parallel(o, "n_f_o_f_y_f"),
                new Primitive.Vectorize(o, "x_i"),
                new Primitive.ComputeAt(local, o, "x_o"),
                new Primitive.Reorder(local, List.of("n", "y", "rc", "ry", "rx", "f", "x")),
                new Primitive.Unroll(local, "f"),
                new Primitive.Vectorize(local, "x")));
        return new Schedule(ps);
    }
}
