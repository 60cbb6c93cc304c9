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
import java.util.Map;
import java.util.Optional;

/**
 * {@code nn.conv2d} in NCHW/OIHW with few input channels (the first layer: 3 channels, which
 * alter-op-layout leaves unblocked), vectorized along the output channels. Its columns make poor
 * SIMD lanes (a strided read per lane, and a width such as 111 = 3 x 37 leaves 3 lanes), so each
 * output pixel gets a tile of {@code oc_bn} channels: per reduction step one broadcast input value
 * and {@code oc_bn / 8} FMAs on contiguous packed weights
 * <pre>
 * wpack[fo, rc, ry, rx, fi] = w[fo*oc_bn + fi, rc, ry, rx]            (a stage of the kernel, per call)
 * out[n, f, y, x] = sum_{rc, ry, rx} pad[n, rc, y*sh + ry*dh, x*sw + rx*dw] * wpack[f / oc_bn, rc, ry, rx, f % oc_bn]
 * </pre>
 * The packing runs per call, so this template is for small weights (the first layer's 64x3x7x7 are
 * 9,408 floats); the tile's channels are written to the NCHW output one plane apart.
 *
 * <p>Knobs: {@code oc_bn} (channels per tile, a multiple of 8 dividing the output channels; it
 * changes the packing, so the template is built for one value), {@code unroll_kw}, {@code order} of
 * the reduction loops.
 */
public final class Conv2dNCHWOcVecTemplate implements ScheduleTemplate {
    public static final String NAME = "conv2d_NCHW_ocvec.x86";
    /** Accumulator vectors a tile may hold (AVX2: 16 registers, one for the broadcast, one spare). */
    private static final int LANES = 8, MAX_ACCUMULATORS = 14;

    private final Compute pad, wpack, out;
    private final int channels, kernelWidth;
    private final String workload;

    private Conv2dNCHWOcVecTemplate(Compute pad, Compute wpack, Compute out, int channels, int kernelWidth, String workload) {
        this.pad = pad;
        this.wpack = wpack;
        this.out = out;
        this.channels = channels;
        this.kernelWidth = kernelWidth;
        this.workload = workload;
    }

    /** Whether the template covers {@code weight [OC, IC, KH, KW]}: output channels in whole vectors. */
    public static boolean applies(List<Integer> weightShape) {
        return weightShape.size() == 4 && weightShape.get(0) % LANES == 0;
    }

    /**
     * The template for data {@code [N, C, H, W]} and weight {@code [OC, C, KH, KW]}, its packing built
     * for {@code config}'s {@code oc_bn} (the default's when absent); {@code workload} is the tuning key.
     */
    public static Conv2dNCHWOcVecTemplate create(Tensor data, Tensor weight, Conv2d.Params p, String name, String workload, Optional<ScheduleConfig> config) {
        List<Integer> ds = data.shape(), ws = weight.shape();
        if (ds.size() != 4 || !applies(ws) || !ws.get(1).equals(ds.get(1))) {
            throw new IllegalArgumentException(NAME + " needs NCHW data and OIHW weight with output channels in multiples of " + LANES + ", got " + ds + " and " + ws);
        }
        int n = ds.get(0), c = ds.get(1), h = ds.get(2), w = ds.get(3);
        int oc = ws.get(0), kh = ws.get(2), kw = ws.get(3);
        Conv2dNCHWOcVecTemplate shapeOnly = new Conv2dNCHWOcVecTemplate(null, null, null, oc, kw, workload);
        ScheduleConfig cfg = config.orElseGet(shapeOnly::defaultConfig);
        shapeOnly.validate(cfg);
        int bn = cfg.getInt("oc_bn");
        int ph = h + p.padTop() + p.padBottom(), pw = w + p.padLeft() + p.padRight();
        int oh = (ph - (kh - 1) * p.dilationH() - 1) / p.strideH() + 1, ow = (pw - (kw - 1) * p.dilationW() - 1) / p.strideW() + 1;
        if (oh <= 0 || ow <= 0) throw new IllegalArgumentException("conv2d: kernel " + kh + "x" + kw + " does not fit the padded input " + ph + "x" + pw);
        boolean padded = p.padTop() + p.padBottom() + p.padLeft() + p.padRight() > 0;
        Compute pad = !padded ? null : Te.compute(name + "_pad", List.of(n, c, ph, pw), List.of("pn", "pc", "ph", "pw"), ix -> {
            PrimExpr y = ix.get(2).sub(p.padTop()), x = ix.get(3).sub(p.padLeft());
            PrimExpr inside = y.ge(0).and(y.lt(PrimExpr.of(h))).and(x.ge(0)).and(x.lt(PrimExpr.of(w)));
            return new Select(inside, data.at(ix.get(0), ix.get(1), y, x), Te.zero(data.dtype()));
        });
        Tensor src = padded ? pad : data;
        Compute wpack = Te.compute(name + "_wpack", List.of(oc / bn, c, kh, kw, bn), List.of("wo", "wc", "wy", "wx", "wi"),
                ix -> weight.at(ix.get(0).mul(bn).add(ix.get(4)), ix.get(1), ix.get(2), ix.get(3)));
        IterVar rc = Te.reduceAxis("rc", c), ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        Compute out = Te.compute(name, List.of(n, oc, oh, ow), List.of("n", "f", "y", "x"), ix -> Te.sum(
                src.at(ix.get(0), rc.var(), ix.get(2).mul(p.strideH()).add(ry.var().mul(p.dilationH())),
                                ix.get(3).mul(p.strideW()).add(rx.var().mul(p.dilationW())))
                        .mul(wpack.at(ix.get(1).div(bn), rc.var(), ry.var(), rx.var(), ix.get(1).mod(bn))),
                rc, ry, rx));
        return new Conv2dNCHWOcVecTemplate(pad, wpack, out, oc, kw, workload);
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
        return pad == null ? List.of(wpack, out) : List.of(pad, wpack, out);
    }

    private List<Integer> ocBnCandidates() {
        List<Integer> out = new ArrayList<>();
        for (int d : ScheduleTemplate.divisors(channels, LANES * MAX_ACCUMULATORS)) if (d % LANES == 0) out.add(d);
        return out;
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("oc_bn", ocBnCandidates(), "output channels per tile (SIMD lanes), a multiple of " + LANES + " dividing " + channels),
                Knob.ints("unroll_kw", List.of(0, 1), "1 = unroll the kernel-width loop"),
                Knob.choices("order", List.of("rc_ry_rx", "ry_rx_rc"), "reduction loop order, outermost first")));
    }

    /** The largest channel tile that fits the registers: the most independent accumulators per broadcast. */
    @Override
    public ScheduleConfig defaultConfig() {
        return new ScheduleConfig(NAME, Map.of("oc_bn", ocBnCandidates().getLast(), "unroll_kw", kernelWidth <= 3 ? 1 : 0, "order", "rc_ry_rx"));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if (c.knobs().get("oc_bn") instanceof Integer o && (o < 1 || channels % o != 0 || o % LANES != 0)) {
            throw new InvalidConfigException(NAME + ": oc_bn=" + o + " must be a multiple of " + LANES + " dividing the output channels " + channels + " (" + workload + ")");
        }
        space().check(c);
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        int bn = wpack.shape().get(4);
        if (c.getInt("oc_bn") != bn) {
            throw new InvalidConfigException(NAME + ": oc_bn=" + c.getInt("oc_bn") + " but this template's weight packing was built for oc_bn=" + bn);
        }
        List<Primitive> ps = new ArrayList<>();
        if (pad != null) {
            Tiles.parallelFused(ps, pad.name(), List.of("pn", "pc"));
            ps.add(new Primitive.Vectorize(pad.name(), "pw"));
        }
        ps.add(new Primitive.Vectorize(wpack.name(), "wi"));
        String local = Tiles.cacheOrAttach(ps, out, o);
        List<String> ax = Tiles.axisNames(o);
        String on = o.name();
        ps.add(new Primitive.Split(on, ax.get(1), bn));
        String fo = ax.get(1) + "_o", fi = ax.get(1) + "_i";
        ps.add(new Primitive.Reorder(on, List.of(ax.get(0), fo, ax.get(2), ax.get(3), fi)));
        Tiles.parallelFused(ps, on, List.of(ax.get(0), fo, ax.get(2)));
        ps.add(new Primitive.Vectorize(on, fi));
        ps.add(new Primitive.ComputeAt(local, on, ax.get(3)));
        List<String> order = new ArrayList<>(List.of("n", "y", "x"));
        order.addAll(c.getString("order").equals("rc_ry_rx") ? List.of("rc", "ry", "rx") : List.of("ry", "rx", "rc"));
        order.add("f");
        ps.add(new Primitive.Reorder(local, order));
        ps.add(new Primitive.Vectorize(local, "f"));
        if (c.getInt("unroll_kw") == 1) ps.add(new Primitive.Unroll(local, "rx"));
        return new Schedule(ps);
    }
}
