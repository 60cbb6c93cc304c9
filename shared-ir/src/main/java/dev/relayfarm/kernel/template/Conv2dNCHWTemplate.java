package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code nn.conv2d} in NCHW/OIHW (the compute of {@link Conv2d}; what alter-op-layout leaves plain,
 * e.g. a first layer with 3 input channels): an {@code oc_bn x reg_n} tile of (output channel,
 * output column) accumulated locally per output row, the reduction outside the tile, channels
 * unrolled and columns as SIMD lanes; (batch, channel block, row) fused and parallel.
 *
 * <p>Knobs: {@code oc_bn} (a divisor of the output channels, at most 16), {@code reg_n} (a divisor of
 * the output width, at most 32), {@code unroll_kw}, {@code order} of the reduction loops.
 */
public final class Conv2dNCHWTemplate implements ScheduleTemplate {
    public static final String NAME = "conv2d_NCHW.x86";
    private final Conv2d.Def def;
    private final int channels, outWidth, kernelWidth;
    private final String workload;

    public Conv2dNCHWTemplate(Conv2d.Def def, int kernelWidth, String workload) {
        this.def = def;
        this.channels = def.out().shape().get(1);
        this.outWidth = def.out().shape().get(3);
        this.kernelWidth = kernelWidth;
        this.workload = workload;
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
        return def.out();
    }

    @Override
    public List<Compute> stages() {
        return def.pad() == null ? List.of(def.out()) : List.of(def.pad(), def.out());
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("oc_bn", ScheduleTemplate.divisors(channels, 16), "output channels per tile (unrolled), a divisor of " + channels),
                Knob.ints("reg_n", ScheduleTemplate.divisors(outWidth, 32), "output columns per tile (SIMD lanes), a divisor of the output width " + outWidth),
                Knob.ints("unroll_kw", List.of(0, 1), "1 = unroll the kernel-width loop"),
                Knob.choices("order", List.of("rc_ry_rx", "ry_rx_rc"), "reduction loop order, outermost first")));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        int regN = 1;
        for (int d : ScheduleTemplate.divisors(outWidth, def.maxColumns())) regN = d;
        if (regN < 7 && outWidth <= 32) regN = outWidth;
        int ocBn = 1;
        for (int d : ScheduleTemplate.divisors(channels, regN > 8 ? 4 : 8)) ocBn = d;
        return new ScheduleConfig(NAME, Map.of("oc_bn", ocBn, "reg_n", regN, "unroll_kw", kernelWidth <= 3 ? 1 : 0, "order", "rc_ry_rx"));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        ConfigSpace.requireDivisor(c, "oc_bn", "the output channels ", channels, workload);
        ConfigSpace.requireDivisor(c, "reg_n", "the output width ", outWidth, workload);
        space().check(c);
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        List<Primitive> ps = new ArrayList<>();
        if (def.pad() != null) {
            Tiles.parallelFused(ps, def.pad().name(), List.of("pn", "pc"));
            ps.add(new Primitive.Vectorize(def.pad().name(), "pw"));
        }
        String local = Tiles.cacheOrAttach(ps, def.out(), o);
        List<String> ax = Tiles.axisNames(o);
        String on = o.name();
        ps.add(new Primitive.Split(on, ax.get(1), c.getInt("oc_bn")));
        ps.add(new Primitive.Split(on, ax.get(3), c.getInt("reg_n")));
        ps.add(new Primitive.Reorder(on, List.of(ax.get(0), ax.get(1) + "_o", ax.get(2), ax.get(3) + "_o", ax.get(1) + "_i", ax.get(3) + "_i")));
        Tiles.parallelFused(ps, on, List.of(ax.get(0), ax.get(1) + "_o", ax.get(2)));
        ps.add(new Primitive.Vectorize(on, ax.get(3) + "_i"));
        ps.add(new Primitive.ComputeAt(local, on, ax.get(3) + "_o"));
        List<String> order = new ArrayList<>(List.of("n", "y"));
        order.addAll(c.getString("order").equals("rc_ry_rx") ? List.of("rc", "ry", "rx") : List.of("ry", "rx", "rc"));
        order.addAll(List.of("f", "x"));
        ps.add(new Primitive.Reorder(local, order));
        ps.add(new Primitive.Unroll(local, "f"));
        ps.add(new Primitive.Vectorize(local, "x"));
        if (c.getInt("unroll_kw") == 1) ps.add(new Primitive.Unroll(local, "rx"));
        return new Schedule(ps);
    }
}
