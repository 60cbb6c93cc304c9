package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.compute.Conv2d;
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
 * {@code nn.contrib_conv2d_NCHWc} on channel-blocked tensors (TVM's x86 {@code conv2d_NCHWc}), the
 * layouts alter-op-layout produces: data {@code NCHW[ic]c}, weight {@code OIHW[ic]i[oc]o} (packed at
 * compile time by fold-constant), output {@code NCHW[oc]c}:
 * <pre>
 * out[n, oc_chunk, oh, ow, oc_block] = sum_{ic_chunk, kh, kw, ic_block}
 *     pad[n, ic_chunk, oh*sh + kh*dh, ow*sw + kw*dw, ic_block] * w[oc_chunk, ic_chunk, kh, kw, ic_block, oc_block]
 * </pre>
 * Schedule: a {@code reg_n x oc_vec} register tile of (output column, output channel) accumulated at
 * each {@code (n, oc_chunk, oh, oc_block_outer, ow_outer)} point, the reduction outside the tile, the
 * columns unrolled and the {@code oc_vec} channels as SIMD lanes (contiguous in both the weight and the
 * output); {@code (n, oc_chunk, oh)} fused and spread across threads.
 *
 * <p>Knobs: {@code ic_bn}, {@code oc_bn} (the packing blocks, fixed by the layouts the passes chose:
 * one candidate each), {@code reg_n} (columns per tile, a divisor of the output width),
 * {@code oc_vec} (channels per tile, a divisor of {@code oc_bn}: half a 16-channel block lets a row
 * whose width has no divisor near 6 still fill the registers, e.g. 13 x 8 instead of 1 x 16),
 * {@code unroll_kw} (unroll the kernel-width loop), {@code order} ({@code kh_kw_ic}: input channels
 * innermost in the reduction, TVM's order; {@code ic_kh_kw}: channel chunks outermost). Optional
 * knobs (absent from the default and from configs stored before them, see {@link Knob#absentMeans}):
 * {@code reg_h} (rows per tile: a {@code reg_h x reg_n x oc_vec} tile reuses each weight vector
 * {@code reg_h} times more, TVM's {@code tile_oh} of its 1x1 schedule; absent = 1), {@code tile_order}
 * (the tile loops: rows inside channel chunks, or chunks inside rows; absent = {@code oc_oh}) and
 * {@code unroll_ic} (unroll the input-channel-block loop; absent = 0).
 */
public final class Conv2dNCHWcTemplate implements ScheduleTemplate {
    public static final String NAME = "conv2d_NCHWc.x86";
    /**
     * SIMD lanes and the accumulator vectors a tile may hold: AVX2 has 16 registers of 8 floats; 14
     * accumulators leave one for the broadcast input and one for a weight vector (a second weight
     * vector is read as the FMA's memory operand).
     */
    private static final int LANES = 8, MAX_ACCUMULATORS = 14;
    /** Independent accumulators that hide the FMA latency (2 FMA pipes x 4 cycles). */
    private static final int SATURATING_ACCUMULATORS = 8;
    /**
     * A tile of several rows may hold at most this many accumulator vectors: AVX-512's 32 registers
     * less a broadcast and weight vectors (on AVX2 such a tile spills, which the tuner measures).
     */
    private static final int MAX_TILE_VECTORS = 28, MAX_REG_H = 8;
    /**
     * Vector FMAs a fully unrolled input-channel block may spell out (tile x ic_bn, x kw when that is
     * unrolled too). Tuning squeezenet and resnet50 with gcc 12 -O3 on a loaded 2-core machine, 1200
     * and 2592 ran past the tuner's 60 s compile timeout, 864 to 1296 mostly compiled (and 864 and 1248
     * were some workloads' fastest), 672 timed out twice under extra load: past 1024 a config costs a
     * minute of tuning for little chance of a gain.
     */
    private static final int MAX_UNROLLED_FMAS = 1024;

    private final Compute pad;
    private final Compute out;
    private final int icBn, ocBn, outHeight, outWidth, kernelWidth;
    private final String workload;

    private Conv2dNCHWcTemplate(Compute pad, Compute out, int icBn, int ocBn, int kernelWidth, String workload) {
        this.pad = pad;
        this.out = out;
        this.icBn = icBn;
        this.ocBn = ocBn;
        this.outHeight = out.shape().get(2);
        this.outWidth = out.shape().get(3);
        this.kernelWidth = kernelWidth;
        this.workload = workload;
    }

    /**
     * The compute (padding stage when padded, then the convolution named {@code name}) for data
     * {@code [N, IC/ic, H, W, ic]} and weight {@code [OC/oc, IC/ic, KH, KW, ic, oc]}.
     */
    public static Conv2dNCHWcTemplate create(Tensor data, Tensor weight, Conv2d.Params p, String name) {
        return create(data, weight, p, 1, name);
    }

    /**
     * The same for a grouped convolution whose groups split whole channel blocks: weight
     * {@code [O/oc, C/groups/ic, KH, KW, ic, oc]}; an output chunk of group {@code g} reads the input chunks
     * of that group only ({@code g * C/groups/ic + ic_chunk}).
     */
    public static Conv2dNCHWcTemplate create(Tensor data, Tensor weight, Conv2d.Params p, int groups, String name) {
        List<Integer> ds = data.shape(), ws = weight.shape();
        if (!applies(ds, ws, groups)) {
            throw new IllegalArgumentException("conv2d_NCHWc needs data [N, C/ic, H, W, ic] and weight [O/oc, C/groups/ic, KH, KW, ic, oc] with groups splitting whole blocks, got "
                    + ds + " and " + ws + " with groups=" + groups);
        }
        int n = ds.get(0), h = ds.get(2), w = ds.get(3), ic = ds.get(4);
        int ocChunks = ws.get(0), icChunks = ws.get(1), kh = ws.get(2), kw = ws.get(3), oc = ws.get(5);
        int ocChunksPerGroup = ocChunks / groups;
        int ph = h + p.padTop() + p.padBottom(), pw = w + p.padLeft() + p.padRight();
        int oh = (ph - (kh - 1) * p.dilationH() - 1) / p.strideH() + 1, ow = (pw - (kw - 1) * p.dilationW() - 1) / p.strideW() + 1;
        if (oh <= 0 || ow <= 0) throw new IllegalArgumentException("conv2d_NCHWc: kernel " + kh + "x" + kw + " does not fit the padded input " + ph + "x" + pw);
        boolean padded = p.padTop() + p.padBottom() + p.padLeft() + p.padRight() > 0;
        Compute pad = padded ? Tiles.padBlocked(data, name, ph, pw, p.padTop(), p.padLeft()) : null;
        Tensor src = padded ? pad : data;
        IterVar rco = Te.reduceAxis("ic_chunk", icChunks), ry = Te.reduceAxis("kh", kh), rx = Te.reduceAxis("kw", kw), rci = Te.reduceAxis("ic_block", ic);
        Compute out = Te.compute(name, List.of(n, ocChunks, oh, ow, oc), List.of("n", "oc_chunk", "oh", "ow", "oc_block"), ix -> Te.sum(
                src.at(ix.get(0), groups == 1 ? rco.var() : ix.get(1).div(ocChunksPerGroup).mul(icChunks).add(rco.var()), ix.get(2).mul(p.strideH()).add(ry.var().mul(p.dilationH())),
                                ix.get(3).mul(p.strideW()).add(rx.var().mul(p.dilationW())), rci.var())
                        .mul(weight.at(ix.get(1), rco.var(), ry.var(), rx.var(), rci.var(), ix.get(4))),
                rco, ry, rx, rci));
        String wl = "nn.contrib_conv2d_NCHWc(data" + ds + ", weight" + ws + ", strides=" + p.strideH() + "x" + p.strideW() + ", padding="
                + p.padTop() + "," + p.padLeft() + "," + p.padBottom() + "," + p.padRight() + ", dilation=" + p.dilationH() + "x" + p.dilationW() + (groups == 1 ? "" : ", groups=" + groups) + ")";
        return new Conv2dNCHWcTemplate(pad, out, ic, oc, kw, wl.replace(" ", ""));
    }

    /**
     * Whether data {@code [N, C/ic, H, W, ic]} and weight {@code [O/oc, C/groups/ic, KH, KW, ic, oc]} are a
     * convolution this template computes: the blocks agree and each group has whole input and output chunks.
     */
    public static boolean applies(List<Integer> data, List<Integer> weight, int groups) {
        return data.size() == 5 && weight.size() == 6 && groups >= 1 && weight.get(4).equals(data.get(4))
                && (long) weight.get(1) * groups == data.get(1) && weight.get(0) % groups == 0;
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
                Knob.ints("ic_bn", List.of(icBn), "input channel block, fixed by the data layout NCHW" + icBn + "c"),
                Knob.ints("oc_bn", List.of(ocBn), "output channel block, fixed by the output layout NCHW" + ocBn + "c"),
                Knob.ints("reg_n", ScheduleTemplate.divisors(outWidth, 32), "output columns per register tile, a divisor of the output width " + outWidth),
                Knob.ints("oc_vec", ocVecCandidates(), "output channels per register tile (SIMD lanes), a divisor of oc_bn=" + ocBn),
                Knob.ints("unroll_kw", List.of(0, 1), "1 = unroll the kernel-width loop"),
                Knob.choices("order", List.of("kh_kw_ic", "ic_kh_kw"), "reduction loop order, outermost first"),
                Knob.ints("reg_h", ScheduleTemplate.divisors(outHeight, MAX_REG_H),
                        "output rows per register tile (a tile is reg_h x reg_n x oc_vec; each weight vector loaded serves reg_h rows), a divisor of the output height " + outHeight)
                        .absentMeans(1),
                Knob.choices("tile_order", List.of("oc_oh", "oh_oc"),
                        "order of the tile loops: oc_oh = the rows of one channel chunk in turn (its weights stay in cache); oh_oc = every channel chunk of a row (its input rows stay in cache)")
                        .absentMeans("oc_oh"),
                Knob.ints("unroll_ic", List.of(0, 1), "1 = unroll the input-channel-block loop (ic_bn broadcasts per tile step)").absentMeans(0)));
    }

    /** Divisors of {@code oc_bn} that fill whole vectors (all of them when oc_bn is below a vector). */
    private List<Integer> ocVecCandidates() {
        List<Integer> out = new ArrayList<>();
        for (int d : ScheduleTemplate.divisors(ocBn, ocBn)) if (d == ocBn || d % LANES == 0) out.add(d);
        return out;
    }

    /**
     * The register tile. First the whole channel block with the widest divisor of the row that keeps
     * 12 accumulators (TVM's rule; a prime width may take the whole row when it stays near that). When
     * that leaves fewer accumulators than hide the FMA latency (width 13 or 14 with 16 channels: 1 or 2
     * columns), the (reg_n, oc_vec) that fits the registers with enough accumulators and the fewest
     * loads per FMA (one broadcast per column, one load per weight vector), else the largest.
     */
    @Override
    public ScheduleConfig defaultConfig() {
        int bestN = 1, bestV = ocBn;
        for (int d : ScheduleTemplate.divisors(outWidth, 32)) if (d * ocBn <= 12 * LANES) bestN = d;
        if (bestN < 4 && outWidth * ocBn <= 24 * LANES && outWidth <= 32) bestN = outWidth;
        if (bestN * Math.max(1, ocBn / LANES) < SATURATING_ACCUMULATORS) {
            double bestScore = Double.NEGATIVE_INFINITY;
            for (int v : ocVecCandidates()) {
                int vectors = Math.max(1, v / LANES);
                for (int n : ScheduleTemplate.divisors(outWidth, 32)) {
                    int acc = n * vectors;
                    if (acc > MAX_ACCUMULATORS) continue;
                    double loadsPerFma = (double) (n + vectors) / acc;
                    double score = acc >= SATURATING_ACCUMULATORS ? 1000 - 100 * loadsPerFma + acc : acc;
                    if (score > bestScore) {
                        bestScore = score;
                        bestN = n;
                        bestV = v;
                    }
                }
            }
        }
        return new ScheduleConfig(NAME, java.util.Map.of("ic_bn", icBn, "oc_bn", ocBn, "reg_n", bestN, "oc_vec", bestV,
                "unroll_kw", kernelWidth <= 3 ? 1 : 0, "order", "ic_kh_kw"));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if (c.knobs().get("ic_bn") instanceof Integer i && i != icBn) {
            throw new InvalidConfigException(NAME + ": ic_bn=" + i + " but the data layout of " + workload + " blocks input channels by " + icBn);
        }
        if (c.knobs().get("oc_bn") instanceof Integer o && o != ocBn) {
            throw new InvalidConfigException(NAME + ": oc_bn=" + o + " but the weight layout of " + workload + " blocks output channels by " + ocBn);
        }
        ConfigSpace.requireDivisor(c, "reg_n", "the output width ", outWidth, workload);
        ConfigSpace.requireDivisor(c, "oc_vec", "oc_bn=", ocBn, workload);
        ConfigSpace.requireDivisor(c, "reg_h", "the output height ", outHeight, workload);
        space().check(c);
        ScheduleConfig full = space().complete(c);
        int regH = full.getInt("reg_h"), vectors = tileVectors(full.getInt("reg_n"), full.getInt("oc_vec"));
        if (regH > 1 && regH * vectors > MAX_TILE_VECTORS) {
            throw new InvalidConfigException(NAME + ": reg_h=" + regH + " x reg_n=" + full.getInt("reg_n") + " x oc_vec=" + full.getInt("oc_vec") + " needs "
                    + regH * vectors + " accumulator vectors; a tile of several rows may hold at most " + MAX_TILE_VECTORS + " (" + workload + ")");
        }
        int unrolled = regH * vectors * icBn * (full.getInt("unroll_kw") == 1 ? kernelWidth : 1);
        if (full.getInt("unroll_ic") == 1 && unrolled > MAX_UNROLLED_FMAS) {
            throw new InvalidConfigException(NAME + ": unroll_ic=1 with this tile spells out " + unrolled + " vector FMAs per unrolled step; at most "
                    + MAX_UNROLLED_FMAS + " compile in reasonable time (" + workload + ")");
        }
    }

    /** Accumulator vectors of a one-row tile of {@code regN} columns by {@code ocVec} channels. */
    private static int tileVectors(int regN, int ocVec) {
        return regN * Math.max(1, (ocVec + LANES - 1) / LANES);
    }

    @Override
    public Schedule schedule(ScheduleConfig config, Compute o) {
        validate(config);
        ScheduleConfig c = space().complete(config);
        int regN = c.getInt("reg_n"), ocVec = c.getInt("oc_vec"), regH = c.getInt("reg_h");
        boolean rowsFirst = c.getString("tile_order").equals("oh_oc");
        List<Primitive> ps = new ArrayList<>();
        if (pad != null) {
            Tiles.parallelFused(ps, pad.name(), List.of("pn", "pc", "ph"));
            ps.add(new Primitive.Vectorize(pad.name(), "pb"));
        }
        String local = Tiles.cacheOrAttach(ps, out, o);
        List<String> ax = Tiles.axisNames(o);
        String n = ax.get(0), chunk = ax.get(1), oh = ax.get(2), ow = ax.get(3), block = ax.get(4);
        ps.add(new Primitive.Split(o.name(), ow, regN));
        String lanes = block;
        List<String> outer = List.of(n, chunk, oh);
        if (regH == 1 && !rowsFirst) {
            // the schedule the template had before reg_h and tile_order: kept primitive for primitive, so untuned kernels do not change
            if (ocVec < ocBn) {
                // channel halves outside the column tile: each tile accumulates reg_n x oc_vec
                ps.add(new Primitive.Split(o.name(), block, ocVec));
                ps.add(new Primitive.Reorder(o.name(), List.of(block + "_o", ow + "_o", ow + "_i", block + "_i")));
                lanes = block + "_i";
            }
        } else {
            String rows = oh;
            if (regH > 1) {
                ps.add(new Primitive.Split(o.name(), oh, regH));
                rows = oh + "_o";
            }
            outer = rowsFirst ? List.of(n, rows, chunk) : List.of(n, chunk, rows);
            List<String> order = new ArrayList<>(outer);
            if (ocVec < ocBn) {
                ps.add(new Primitive.Split(o.name(), block, ocVec));
                order.add(block + "_o");
                lanes = block + "_i";
            }
            order.add(ow + "_o");
            if (regH > 1) order.add(oh + "_i");
            order.add(ow + "_i");
            order.add(lanes);
            ps.add(new Primitive.Reorder(o.name(), order));
        }
        Tiles.parallelFused(ps, o.name(), outer);
        ps.add(new Primitive.Vectorize(o.name(), lanes));
        ps.add(new Primitive.ComputeAt(local, o.name(), ow + "_o"));
        List<String> reduce = c.getString("order").equals("kh_kw_ic") ? List.of("kh", "kw", "ic_chunk", "ic_block") : List.of("ic_chunk", "kh", "kw", "ic_block");
        List<String> order = new ArrayList<>(List.of("n", "oc_chunk"));
        // with several rows, the rows join the unrolled tile: every weight vector loaded feeds reg_h x reg_n FMAs
        if (regH == 1) order.add("oh");
        order.addAll(reduce);
        if (regH > 1) order.add("oh");
        order.addAll(List.of("ow", "oc_block"));
        ps.add(new Primitive.Reorder(local, order));
        if (regH > 1) ps.add(new Primitive.Unroll(local, "oh"));
        ps.add(new Primitive.Unroll(local, "ow"));
        ps.add(new Primitive.Vectorize(local, "oc_block"));
        if (c.getInt("unroll_kw") == 1) ps.add(new Primitive.Unroll(local, "kw"));
        if (c.getInt("unroll_ic") == 1) ps.add(new Primitive.Unroll(local, "ic_block"));
        return new Schedule(ps);
    }
}
