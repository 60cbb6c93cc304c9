package dev.relayfarm.kernel.template;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.expr.Cast;
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
import java.util.Map;

/**
 * An 8-bit {@code nn.conv2d} (NCHW/OIHW, 8-bit data, int8 weights, int32 accumulation: quantize-realize's
 * convolutions) as dot products of contiguous rows: the input unfolded per call into {@code col[n, y*OW + x, r]} with
 * {@code r = (c, ky, kx)} (zeros where the window leaves the padded image), the weight flattened into
 * {@code wflat[f, r]}, and each output {@code sum_r wflat[f, r] * col[n, p, r]} with the reduction innermost and a
 * scalar accumulator. That is the loop the C compiler turns into {@code vpdpbusd} for uint8 data (AVX-512 VNNI /
 * AVX-VNNI: 64 unsigned × signed byte products per instruction; int8 data widens first) or {@code pmaddubsw}/
 * {@code pmaddwd} on plain AVX2, which the direct NCHW template's widening multiply of one weight by a row of columns
 * never becomes. The weight is copied flat although OIHW already is that layout in memory: read through its 4-D
 * index, the reduction's last index is not the bare reduction variable, which the vectorizer needs ({@code F·C·KH·KW}
 * bytes a call). The unfolded input costs {@code C·KH·KW} bytes a pixel, written once, then read once per output
 * channel ({@code f_p}: from cache only while it fits) or once per pixel ({@code p_f}).
 *
 * <p>Knob: {@code order}, {@code f_p} (an output channel's pixels in turn: its weight row stays in L1) or {@code p_f}
 * (a pixel's channels in turn: its unfolded row stays in L1). Threads share the outer of the two.
 */
public final class Conv2dInt8DotTemplate implements ScheduleTemplate {
    public static final String NAME = "conv2d_NCHW_int8_dot.x86";
    private final Compute col, wflat, out;
    private final int outWidth, kernelHeight, kernelWidth;
    private final String workload;

    private Conv2dInt8DotTemplate(Compute col, Compute wflat, Compute out, int outWidth, int kernelHeight, int kernelWidth, String workload) {
        this.col = col;
        this.wflat = wflat;
        this.out = out;
        this.outWidth = outWidth;
        this.kernelHeight = kernelHeight;
        this.kernelWidth = kernelWidth;
        this.workload = workload;
    }

    /** Whether the template computes this convolution: 8-bit data, int8 weights, no groups. */
    public static boolean applies(Tensor data, Tensor weight, int groups) {
        return groups == 1 && weight.dtype().equals(DType.INT8) && (data.dtype().equals(DType.UINT8) || data.dtype().equals(DType.INT8));
    }

    /**
     * Whether the template is the default for a convolution it {@link #applies applies} to: a reduction
     * {@code C·KH·KW} of at least 64 for unsigned data (one 512-bit vector of bytes for VNNI's {@code vpdpbusd}, which
     * multiplies unsigned by signed bytes) or at least 256 for signed data (widened to 16 bits first, at half the rate).
     * A shorter one leaves its vectors partly empty and still pays the unfolding and a horizontal sum per output; it goes
     * to {@link Conv2dNCHWTemplate} with the data widened once, output columns as the SIMD lanes. Measured per layer
     * (relayc profile, one thread, a loaded machine): ppocr_cls's convolutions (signed data after a hard-swish, R 8..200;
     * unsigned R 8..32) take 2-3x less time in the NCHW template; light ResNet-50's (unsigned R 64..4608, signed
     * R 64..2048) mostly 1.1-3.7x more, except its signed R = 64 ones, which are mixed.
     */
    public static boolean preferred(Tensor data, Tensor weight) {
        List<Integer> ws = weight.shape();
        long reduction = (long) ws.get(1) * ws.get(2) * ws.get(3);
        return reduction >= (data.dtype().equals(DType.UINT8) ? 64 : 256);
    }

    public static Conv2dInt8DotTemplate create(Tensor data, Tensor weight, Conv2d.Params p, String name, String workload) {
        List<Integer> ds = data.shape(), ws = weight.shape();
        int n = ds.get(0), c = ds.get(1), h = ds.get(2), w = ds.get(3);
        int f = ws.get(0), kh = ws.get(2), kw = ws.get(3);
        int oh = (h + p.padTop() + p.padBottom() - (kh - 1) * p.dilationH() - 1) / p.strideH() + 1;
        int ow = (w + p.padLeft() + p.padRight() - (kw - 1) * p.dilationW() - 1) / p.strideW() + 1;
        int window = kh * kw;
        Compute col = Te.compute(name + "_col", List.of(n, oh * ow, c * window), List.of("cn", "cp", "cr"), ix -> {
            PrimExpr pixel = ix.get(1), r = ix.get(2);
            PrimExpr y = pixel.div(ow).mul(p.strideH()).sub(p.padTop()).add(r.mod(window).div(kw).mul(p.dilationH()));
            PrimExpr x = pixel.mod(ow).mul(p.strideW()).sub(p.padLeft()).add(r.mod(kw).mul(p.dilationW()));
            PrimExpr inside = y.ge(0).and(y.lt(PrimExpr.of(h))).and(x.ge(0)).and(x.lt(PrimExpr.of(w)));
            // clamped into the image: a fused producer's flattened index then simplifies, and nothing reads outside
            // its buffer (the select discards what is read at the border)
            PrimExpr cy = y.max(PrimExpr.of(0)).min(PrimExpr.of(h - 1)), cx = x.max(PrimExpr.of(0)).min(PrimExpr.of(w - 1));
            return new Select(inside, data.at(ix.get(0), r.div(window), cy, cx), Te.zero(data.dtype()));
        });
        Compute wflat = Te.compute(name + "_wflat", List.of(f, c * window), List.of("wf", "wr"),
                ix -> weight.at(ix.get(0), ix.get(1).div(window), ix.get(1).mod(window).div(kw), ix.get(1).mod(kw)));
        IterVar rk = Te.reduceAxis("rk", c * window);
        Compute out = Te.compute(name, List.of(n, f, oh, ow), List.of("n", "f", "y", "x"), ix -> Te.sum(
                new Cast(DType.INT32, col.at(ix.get(0), ix.get(2).mul(ow).add(ix.get(3)), rk.var()))
                        .mul(new Cast(DType.INT32, wflat.at(ix.get(1), rk.var()))), rk));
        return new Conv2dInt8DotTemplate(col, wflat, out, ow, kh, kw, workload);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String workload() {
        return workload;
    }

    @Override
    public Compute anchor() {
        return out;
    }

    @Override
    public List<Compute> stages() {
        return List.of(col, wflat, out);
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(Knob.choices("order", List.of("f_p", "p_f"),
                "f_p = an output channel's pixels in turn (its weight row stays in cache); p_f = a pixel's channels in turn (its unfolded row stays in cache)")));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        return new ScheduleConfig(NAME, Map.of("order", "f_p"));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        space().check(c);
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        List<Primitive> ps = new ArrayList<>();
        // the unfolding's pixel loop split into (row, column) and its window loop into (channel, ky, kx): the divisions
        // and remainders of the flat indices then simplify away (one per element made it slower than the dot products)
        String cn = col.name();
        ps.add(new Primitive.Split(cn, "cp", outWidth));
        ps.add(new Primitive.Split(cn, "cr", kernelWidth));
        ps.add(new Primitive.Split(cn, "cr_o", kernelHeight));
        Tiles.parallelFused(ps, cn, List.of("cn", "cp_o"));
        Tiles.parallelFused(ps, wflat.name(), List.of("wf"));
        String local = Tiles.cacheOrAttach(ps, out, o);
        List<String> ax = Tiles.axisNames(o);
        String on = o.name();
        // (y, x) fused into the pixel loop; the channel loop outside or inside it, the outer one (with the batch) parallel
        String pixel = Tiles.fuseAll(ps, on, List.of(ax.get(2), ax.get(3)));
        String inner;
        if (c.getString("order").equals("f_p")) {
            Tiles.parallelFused(ps, on, List.of(ax.get(0), ax.get(1)));
            inner = pixel;
        } else {
            ps.add(new Primitive.Reorder(on, List.of(ax.get(0), pixel, ax.get(1))));
            Tiles.parallelFused(ps, on, List.of(ax.get(0), pixel));
            inner = ax.get(1);
        }
        // one output at a time: a scalar accumulator over the contiguous reduction, the dot product the compiler vectorizes
        ps.add(new Primitive.ComputeAt(local, on, inner));
        return new Schedule(ps);
    }
}
