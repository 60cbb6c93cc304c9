package dev.relayfarm.kernel.template;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.Conv2DNCHWc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A depthwise {@code nn.contrib_conv2d_NCHWc} (groups = channels, one filter per channel; TVM's x86
 * {@code depthwise_conv2d_NCHWc}) on channel-blocked tensors: data {@code NCHW[c]c}, weight
 * {@code OIHW1i[c]o} ({@code [C/c, 1, KH, KW, 1, c]}, packed at compile time), output {@code NCHW[c]c}:
 * <pre>
 * out[n, chunk, oh, ow, block] = sum_{kh, kw} pad[n, chunk, oh*sh + kh*dh, ow*sw + kw*dw, block] * w[chunk, 0, kh, kw, 0, block]
 * </pre>
 * The channel block is the SIMD lane, so every output pixel is {@code KH x KW} vector FMAs whatever the
 * stride (in NCHW the lanes would be output columns, which a stride-2 convolution reads with gaps).
 * Schedule: a tile of {@code reg_n} output columns (x {@code c} channels) accumulated in registers at each
 * {@code (n, chunk, oh, ow_outer)} point, the kernel window outside the tile, columns unrolled;
 * {@code (n, chunk, oh)} fused and spread across threads.
 *
 * <p>Knobs: {@code block} (fixed by the layouts), {@code reg_n} (columns per tile, a divisor of the output
 * width), {@code unroll_kw} (unroll the kernel-width loop), {@code unroll_kh} (unroll the kernel-height loop too).
 * Optional (absent from configs stored before it, {@link Knob#absentMeans}): {@code reg_h} (output rows per tile,
 * a divisor of the output height; absent = 1): a {@code reg_h x reg_n} tile has that many independent accumulators,
 * and each weight vector loaded feeds all of them.
 */
public final class DepthwiseConv2dNCHWcTemplate implements ScheduleTemplate {
    public static final String NAME = "depthwise_conv2d_NCHWc.x86";
    /** The accumulator vectors a tile may hold (of AVX2's 16 registers; with AVX-512's 32, 10 columns ran no faster than 8). */
    private static final int MAX_ACCUMULATORS = 12;
    /**
     * Independent accumulators that hide the FMA latency: a 5x5 filter over a 16-channel block on an AVX-512 Zen 4 (gcc
     * 12, one register per column) ran 70 GFLOP/s with 4 columns, 97 with 5 and 113 with 8; 4 columns of 2 rows ran 88.
     */
    private static final int SATURATING_ACCUMULATORS = 8;
    /** Rows a tile may span, and the accumulator vectors a tile of several rows may hold (AVX-512's 32 registers less inputs and weights). */
    private static final int MAX_REG_H = 4, MAX_TILE_VECTORS = 28;

    private final Compute pad;
    private final Compute out;
    private final int block, outHeight, outWidth, kernelHeight, kernelWidth;
    private final Registers registers;
    private final String workload;

    private DepthwiseConv2dNCHWcTemplate(Compute pad, Compute out, int block, int kernelHeight, int kernelWidth, Registers registers, String workload) {
        this.pad = pad;
        this.out = out;
        this.block = block;
        this.outHeight = out.shape().get(2);
        this.outWidth = out.shape().get(3);
        this.kernelHeight = kernelHeight;
        this.kernelWidth = kernelWidth;
        this.registers = registers;
        this.workload = workload;
    }

    /**
     * Whether data {@code [N, C/c, H, W, c]} and weight {@code [C/c, 1, KH, KW, 1, c]} with {@code groups}
     * form a depthwise convolution this template computes (one filter per channel, same block both sides).
     */
    public static boolean applies(List<Integer> data, List<Integer> weight, int groups) {
        return data.size() == 5 && weight.size() == 6 && groups == data.get(1) * data.get(4)
                && weight.get(0).equals(data.get(1)) && weight.get(1) == 1 && weight.get(4) == 1 && weight.get(5).equals(data.get(4));
    }

    /**
     * Whether {@code nn.contrib_conv2d_NCHWc} with {@code attrs} on data of {@code dtype} and these shapes is this
     * template's: depthwise, NCHW[c]c in and out, weight OIHW1i[c]o, no change of dtype. {@code kernel.lower.Anchors}
     * lowers such a call with it, and fusion counts on its padding stage ({@code passes.PaddedDataCopy}).
     */
    public static boolean covers(List<Integer> data, List<Integer> weight, DType dtype, Conv2DNCHWc.Conv2DNCHWcAttrs attrs) {
        if (data.size() != 5 || weight.size() != 6 || !applies(data, weight, attrs.groups())) return false;
        int c = data.get(4);
        return attrs.dataLayout().name().equals("NCHW" + c + "c") && attrs.kernelLayout().name().equals("OIHW1i" + c + "o")
                && attrs.outLayout().name().equals("NCHW" + c + "c") && (attrs.outDtype() == null || attrs.outDtype().equals(dtype));
    }

    /** The compute (padding stage when padded, then the convolution named {@code name}), its tile budgeted for AVX2. */
    public static DepthwiseConv2dNCHWcTemplate create(Tensor data, Tensor weight, Conv2d.Params p, String name) {
        return create(data, weight, p, name, Registers.AVX2);
    }

    /** The same with the tile budgeted for {@code registers}. */
    public static DepthwiseConv2dNCHWcTemplate create(Tensor data, Tensor weight, Conv2d.Params p, String name, Registers registers) {
        List<Integer> ds = data.shape(), ws = weight.shape();
        if (!applies(ds, ws, ds.size() == 5 ? ds.get(1) * ds.get(4) : -1)) {
            throw new IllegalArgumentException("depthwise conv2d_NCHWc needs data [N, C/c, H, W, c] and weight [C/c, 1, KH, KW, 1, c], got " + ds + " and " + ws);
        }
        int n = ds.get(0), chunks = ds.get(1), h = ds.get(2), w = ds.get(3), c = ds.get(4);
        int kh = ws.get(2), kw = ws.get(3);
        int ph = h + p.padTop() + p.padBottom(), pw = w + p.padLeft() + p.padRight();
        int oh = (ph - (kh - 1) * p.dilationH() - 1) / p.strideH() + 1, ow = (pw - (kw - 1) * p.dilationW() - 1) / p.strideW() + 1;
        if (oh <= 0 || ow <= 0) throw new IllegalArgumentException("depthwise conv2d_NCHWc: kernel " + kh + "x" + kw + " does not fit the padded input " + ph + "x" + pw);
        boolean padded = p.padTop() + p.padBottom() + p.padLeft() + p.padRight() > 0;
        Compute pad = padded ? Tiles.padBlocked(data, name, ph, pw, p.padTop(), p.padLeft()) : null;
        Tensor src = padded ? pad : data;
        IterVar ry = Te.reduceAxis("kh", kh), rx = Te.reduceAxis("kw", kw);
        PrimExpr zero = PrimExpr.of(0);
        Compute out = Te.compute(name, List.of(n, chunks, oh, ow, c), List.of("n", "chunk", "oh", "ow", "block"), ix -> Te.sum(
                src.at(ix.get(0), ix.get(1), ix.get(2).mul(p.strideH()).add(ry.var().mul(p.dilationH())),
                                ix.get(3).mul(p.strideW()).add(rx.var().mul(p.dilationW())), ix.get(4))
                        .mul(weight.at(ix.get(1), zero, ry.var(), rx.var(), zero, ix.get(4))),
                ry, rx));
        String wl = "nn.contrib_conv2d_NCHWc(data" + ds + ", weight" + ws + ", strides=" + p.strideH() + "x" + p.strideW() + ", padding="
                + p.padTop() + "," + p.padLeft() + "," + p.padBottom() + "," + p.padRight() + ", dilation=" + p.dilationH() + "x" + p.dilationW()
                + ", groups=" + chunks * c + ")";
        return new DepthwiseConv2dNCHWcTemplate(pad, out, c, kh, kw, registers, wl.replace(" ", ""));
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
        return pad == null ? List.of(out) : List.of(pad, out);
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("block", List.of(block), "channel block (the SIMD lanes), fixed by the layout NCHW" + block + "c"),
                Knob.ints("reg_n", ScheduleTemplate.divisors(outWidth, 32), "output columns per register tile, a divisor of the output width " + outWidth),
                Knob.ints("unroll_kw", List.of(0, 1), "1 = unroll the kernel-width loop"),
                Knob.ints("unroll_kh", List.of(0, 1), "1 = unroll the kernel-height loop"),
                Knob.ints("reg_h", ScheduleTemplate.divisors(outHeight, MAX_REG_H),
                        "output rows per register tile (a tile is reg_h x reg_n columns; each weight vector loaded serves every row), a divisor of the output height " + outHeight)
                        .absentMeans(1)));
    }

    /**
     * The widest divisor of the row whose tile fits the accumulators (a whole short row when that is few columns); when
     * that leaves fewer accumulators than hide the FMA latency, the fewest rows that make up for it.
     */
    @Override
    public ScheduleConfig defaultConfig() {
        int vectors = registers.vectors(block), regN = 1;
        for (int d : ScheduleTemplate.divisors(outWidth, 32)) if (d * vectors <= MAX_ACCUMULATORS) regN = d;
        Map<String, Object> knobs = new java.util.LinkedHashMap<>(Map.of("block", block, "reg_n", regN, "unroll_kw", kernelWidth <= 5 ? 1 : 0, "unroll_kh", 0));
        if (regN * vectors < SATURATING_ACCUMULATORS) {
            for (int h : ScheduleTemplate.divisors(outHeight, MAX_REG_H)) {
                if (h > 1 && h * regN * vectors <= MAX_ACCUMULATORS) {
                    knobs.put("reg_h", h);
                    if (h * regN * vectors >= SATURATING_ACCUMULATORS) break;
                }
            }
        }
        return new ScheduleConfig(NAME, knobs);
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if (c.knobs().get("block") instanceof Integer b && b != block) {
            throw new InvalidConfigException(NAME + ": block=" + b + " but the layouts of " + workload + " block channels by " + block);
        }
        ConfigSpace.requireDivisor(c, "reg_n", "the output width ", outWidth, workload);
        ConfigSpace.requireDivisor(c, "reg_h", "the output height ", outHeight, workload);
        space().check(c);
        ScheduleConfig full = space().complete(c);
        int regH = full.getInt("reg_h"), vectors = full.getInt("reg_n") * registers.vectors(block);
        if (regH > 1 && regH * vectors > MAX_TILE_VECTORS) {
            throw new InvalidConfigException(NAME + ": reg_h=" + regH + " x reg_n=" + full.getInt("reg_n") + " needs " + regH * vectors
                    + " accumulator vectors; a tile of several rows may hold at most " + MAX_TILE_VECTORS + " (" + workload + ")");
        }
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        List<Primitive> ps = new ArrayList<>();
        if (pad != null) {
            Tiles.parallelFused(ps, pad.name(), List.of("pn", "pc", "ph"));
            ps.add(new Primitive.Vectorize(pad.name(), "pb"));
        }
        String local = Tiles.cacheOrAttach(ps, out, o);
        List<String> ax = Tiles.axisNames(o);
        String oh = ax.get(2), ow = ax.get(3);
        int regH = space().complete(c).getInt("reg_h");
        ps.add(new Primitive.Split(o.name(), ow, c.getInt("reg_n")));
        if (regH == 1) {
            Tiles.parallelFused(ps, o.name(), List.of(ax.get(0), ax.get(1), oh));
        } else {
            // the rows inside the column tile: the local tile spans reg_h rows of reg_n columns
            ps.add(new Primitive.Split(o.name(), oh, regH));
            ps.add(new Primitive.Reorder(o.name(), List.of(ax.get(0), ax.get(1), oh + "_o", ow + "_o", oh + "_i", ow + "_i", ax.get(4))));
            Tiles.parallelFused(ps, o.name(), List.of(ax.get(0), ax.get(1), oh + "_o"));
        }
        ps.add(new Primitive.Vectorize(o.name(), ax.get(4)));
        ps.add(new Primitive.ComputeAt(local, o.name(), ow + "_o"));
        ps.add(new Primitive.Reorder(local, regH == 1 ? List.of("n", "chunk", "oh", "kh", "kw", "ow", "block") : List.of("n", "chunk", "kh", "kw", "oh", "ow", "block")));
        if (regH > 1) ps.add(new Primitive.Unroll(local, "oh"));
        ps.add(new Primitive.Unroll(local, "ow"));
        ps.add(new Primitive.Vectorize(local, "block"));
        if (c.getInt("unroll_kw") == 1) ps.add(new Primitive.Unroll(local, "kw"));
        if (c.getInt("unroll_kh") == 1) ps.add(new Primitive.Unroll(local, "kh"));
        return new Schedule(ps);
    }
}
