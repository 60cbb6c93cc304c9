package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.expr.Combiner;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Any reduction compute without a dedicated template (pooling, sum/max/mean, a grouped convolution):
 * the outer data axes fused and parallel, the reduction loops inside them, and the innermost data
 * axis moved inside the reduction as SIMD lanes (so {@code max_pool2d} on {@code NCHW16c} updates 16
 * channels per instruction, and an NCHW pooling row at once).
 *
 * <p>Knobs: {@code parallel} (1 = threads over the fused outer axes), {@code vectorize} (1 = the
 * innermost data axis inside the reduction, vectorized; needs a data axis of extent at least 2). The default
 * vectorizes unless the compute is an integer dot product over contiguous rows ({@link #integerDotProduct}).
 * {@code channel_lanes} (optional, absent = 0): where every data axis after the last one of extent 2 or more has
 * extent 1 (an NCHW {@code global_avg_pool2d}, {@code [N, C, 1, 1]}), {@code channel_lanes} of that axis inside the
 * reduction, unrolled: that many independent sums in flight instead of one chain of dependent adds (a float sum is
 * not reassociated, so one output's sum is a chain as long as the reduction; each output's order stays the same, so
 * the result does too). quantize-realize leaves ppocr_cls's squeeze-and-excitation pools on float NCHW data, where
 * each took 20-30 µs of a 1 ms program.
 */
public final class ReductionTemplate implements ScheduleTemplate {
    public static final String NAME = "reduction.x86";
    /** The shortest reduction read as a dot product: one AVX2 vector of 8-bit elements. */
    private static final int MIN_DOT_LENGTH = 32;
    /** Sums in flight with {@code channel_lanes}: enough to hide an add's latency behind the loads. */
    private static final int LANES = 8;
    /** The shortest reduction worth {@code channel_lanes} by default (a short one is no long chain). */
    private static final int MIN_LANE_REDUCTION = 16;
    private final Compute r;
    private final String workload;

    public ReductionTemplate(Compute r, String workload) {
        if (!r.isReduction()) throw new IllegalArgumentException(r.name() + " is not a reduction");
        this.r = r;
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
        return r;
    }

    @Override
    public List<Compute> stages() {
        return List.of(r);
    }

    private int innermost() {
        return r.axes().isEmpty() ? 0 : r.axes().getLast().extent();
    }

    /**
     * The data axis {@code channel_lanes} splits: the last one of extent at least 2 when the axes after it all have
     * extent 1 and it has whole groups of {@link #LANES} (-1 otherwise, and when the innermost axis is that axis: then
     * {@code vectorize} applies).
     */
    private int laneAxis() {
        List<IterVar> axes = r.axes();
        int d = axes.size() - 1;
        while (d >= 0 && axes.get(d).extent() == 1) d--;
        return d >= 0 && d < axes.size() - 1 && axes.get(d).extent() % LANES == 0 ? d : -1;
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("parallel", r.axes().isEmpty() ? List.of(0) : List.of(0, 1), "1 = threads over the fused outer data axes"),
                Knob.ints("vectorize", innermost() >= 2 ? List.of(0, 1) : List.of(0), "1 = innermost data axis inside the reduction as SIMD lanes"),
                Knob.ints("channel_lanes", laneAxis() >= 0 ? List.of(0, LANES) : List.of(0),
                        LANES + " = that many outputs of the last non-unit data axis summed side by side inside the reduction (unrolled)").absentMeans(0)));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        long size = r.shape().stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b);
        long work = size;
        for (IterVar iv : r.reduceAxes()) work *= iv.extent();
        boolean vec = innermost() >= 4 && r.axes().size() >= 1 && !integerDotProduct();
        long outer = vec ? size / innermost() : size;
        int parallel = outer >= 2 && work >= 32768 ? 1 : 0;
        if (!vec && laneAxis() >= 0 && size > 0 && work / size >= MIN_LANE_REDUCTION) {
            return new ScheduleConfig(NAME, Map.of("parallel", parallel, "vectorize", 0, "channel_lanes", LANES));
        }
        return new ScheduleConfig(NAME, Map.of("parallel", parallel, "vectorize", vec ? 1 : 0));
    }

    /**
     * An integer sum whose every tensor read is indexed last by the innermost reduction variable alone, over at least
     * {@link #MIN_DOT_LENGTH} steps: a dot product of contiguous rows (an int8 dense: data row × weight row), or any
     * integer row sum, which vectorizes the same way. With the
     * reduction innermost the C compiler vectorizes it as one (an integer sum may be reassociated: {@code vpdpbusd} or
     * {@code pmaddubsw}/{@code pmaddwd} for 8-bit inputs); with a data axis inside it the weight is read with a row's
     * stride. mnist8's int8 dense (1x256 by 10x256): 26 µs with the data axis inside, 0.07 µs with the reduction
     * innermost. Not for floats: without reassociation their sum stays one chain of adds.
     */
    private boolean integerDotProduct() {
        if (!(r.body() instanceof Reduce red) || red.combiner() != Combiner.SUM || !red.dtype().isInteger()) return false;
        IterVar k = red.axes().getLast();
        if (k.extent() < MIN_DOT_LENGTH) return false;
        boolean[] contiguous = {true};
        int[] reads = {0};
        PrimExprs.forEach(red.source(), e -> {
            if (e instanceof TensorLoad t) {
                reads[0]++;
                if (!t.indices().getLast().equals(k.var())) contiguous[0] = false;
            }
        });
        return reads[0] > 0 && contiguous[0];
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if (c.knobs().get("vectorize") instanceof Integer v && v == 1 && innermost() < 2) {
            throw new InvalidConfigException(NAME + ": vectorize=1 needs an innermost data axis of extent >= 2, " + r.name() + " has shape " + r.shape());
        }
        space().check(c);
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        // an epilogue of another shape (a reshape after the sum) has no lane axis of its own: the plain schedule
        if (space().complete(c).getInt("channel_lanes") > 0 && (o.id() == r.id() || o.shape().equals(r.shape()))) return laneSchedule(c, o);
        List<Primitive> ps = new ArrayList<>();
        boolean vec = c.getInt("vectorize") == 1;
        List<String> data = Tiles.axisNames(r);
        List<String> reduce = r.reduceAxes().stream().map(IterVar::name).toList();
        int nOuter = vec ? data.size() - 1 : data.size();
        String rn = r.name();
        if (vec) {
            List<String> order = new ArrayList<>(data.subList(0, nOuter));
            order.addAll(reduce);
            order.add(data.getLast());
            ps.add(new Primitive.Reorder(rn, order));
            ps.add(new Primitive.Vectorize(rn, data.getLast()));
        }
        boolean epilogue = o.id() != r.id();
        if (epilogue && nOuter == 0) throw new IllegalArgumentException(NAME + ": no outer axis to attach " + rn + " to its epilogue " + o.name());
        Compute tiled = epilogue ? o : r;
        List<String> ax = Tiles.axisNames(tiled);
        String fused = Tiles.fuseAll(ps, tiled.name(), ax.subList(0, nOuter));
        if (c.getInt("parallel") == 1 && fused != null) ps.add(new Primitive.Parallel(tiled.name(), fused));
        if (epilogue) {
            if (vec) ps.add(new Primitive.Vectorize(o.name(), ax.getLast()));
            ps.add(new Primitive.ComputeAt(rn, o.name(), fused));
        }
        return new Schedule(ps);
    }

    /**
     * {@code channel_lanes}: the lane axis split by {@link #LANES}, its outer part fused with the axes before it (the
     * threads' loop), and the reduction computed per group of lanes with the lanes innermost, unrolled.
     */
    private Schedule laneSchedule(ScheduleConfig c, Compute o) {
        if (c.getInt("vectorize") == 1) throw new InvalidConfigException(NAME + ": channel_lanes and vectorize=1 exclude each other (" + workload + ")");
        List<Primitive> ps = new ArrayList<>();
        int d = laneAxis();
        List<String> data = Tiles.axisNames(r);
        List<String> reduce = r.reduceAxes().stream().map(IterVar::name).toList();
        boolean epilogue = o.id() != r.id();
        Compute tiled = epilogue ? o : r;
        List<String> ax = Tiles.axisNames(tiled);
        ps.add(new Primitive.Split(tiled.name(), ax.get(d), LANES));
        List<String> outer = new ArrayList<>(ax.subList(0, d));
        outer.add(ax.get(d) + "_o");
        String fused = Tiles.fuseAll(ps, tiled.name(), outer);
        if (c.getInt("parallel") == 1) ps.add(new Primitive.Parallel(tiled.name(), fused));
        if (epilogue) {
            ps.add(new Primitive.ComputeAt(r.name(), o.name(), fused));
            List<String> order = new ArrayList<>(data.subList(0, d));
            order.addAll(data.subList(d + 1, data.size()));
            order.addAll(reduce);
            order.add(data.get(d));
            ps.add(new Primitive.Reorder(r.name(), order));
            ps.add(new Primitive.Unroll(r.name(), data.get(d)));
        } else {
            List<String> split = new ArrayList<>(List.of(fused));
            split.addAll(data.subList(d + 1, data.size()));
            split.addAll(reduce);
            split.add(data.get(d) + "_i");
            ps.add(new Primitive.Reorder(r.name(), split));
            ps.add(new Primitive.Unroll(r.name(), data.get(d) + "_i"));
        }
        return new Schedule(ps);
    }
}
