package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code nn.dense} reading the weight {@code [N, K]} in place (TVM's {@code dense_nopack.x86}), for
 * small batches where packing a large weight on every call would cost more than the product: the
 * reduction is split by the vector width {@code vec} into lanes that accumulate independently
 * (an rfactor),
 * <pre>
 * partial[i, j, kk] = sum_ko data[i, ko*vec + kk] * weight[j, ko*vec + kk]      (kk = SIMD lanes)
 * out[i, j]         = sum_kk partial[i, j, kk]
 * </pre>
 * with {@code tile_x} output columns computed together ({@code tile_x} weight rows streamed at once,
 * one vector accumulator each); (row, column block) fused and parallel.
 *
 * <p>Knobs: {@code vec} (lanes: a divisor of K among 16, 8, 4, 1), {@code tile_x} (columns per tile, a
 * divisor of N at most 16).
 */
public final class DenseNoPackTemplate implements ScheduleTemplate {
    public static final String NAME = "dense_nopack.x86";
    private final int m, n, k;
    private final Compute partial, out;
    private final String workload;

    private DenseNoPackTemplate(int m, int n, int k, Compute partial, Compute out, String workload) {
        this.m = m;
        this.n = n;
        this.k = k;
        this.partial = partial;
        this.out = out;
        this.workload = workload;
    }

    static String workload(Tensor data, Tensor weight) {
        return "nn.dense(data" + data.shape() + ",weight" + weight.shape() + ")";
    }

    public static DenseNoPackTemplate create(Tensor data, Tensor weight, String name, java.util.Optional<ScheduleConfig> config) {
        int m = data.shape().get(0), k = data.shape().get(1), n = weight.shape().get(0);
        String wl = workload(data, weight).replace(" ", "");
        DenseNoPackTemplate shapeOnly = new DenseNoPackTemplate(m, n, k, null, null, wl);
        ScheduleConfig c = config.orElseGet(shapeOnly::defaultConfig);
        shapeOnly.validate(c);
        int vec = c.getInt("vec");
        IterVar ko = Te.reduceAxis("ko", k / vec);
        Compute partial = Te.compute(name + "_rf", List.of(m, n, vec), List.of("i", "j", "kk"), ix -> {
            PrimExpr kIdx = ko.var().mul(vec).add(ix.get(2));
            return Te.sum(data.at(ix.get(0), kIdx).mul(weight.at(ix.get(1), kIdx)), ko);
        });
        IterVar kk = Te.reduceAxis("rkk", vec);
        Compute out = Te.compute(name, List.of(m, n), List.of("i", "j"), ix -> Te.sum(partial.at(ix.get(0), ix.get(1), kk.var()), kk));
        return new DenseNoPackTemplate(m, n, k, partial, out, wl);
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
        return List.of(partial, out);
    }

    private List<Integer> vecs() {
        List<Integer> vs = new ArrayList<>();
        for (int v : List.of(1, 4, 8, 16)) if (k % v == 0) vs.add(v);
        return vs;
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("vec", vecs(), "reduction lanes accumulated separately, a divisor of " + k),
                Knob.ints("tile_x", ScheduleTemplate.divisors(n, 16), "output columns per tile, a divisor of " + n)));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        int vec = 1;
        for (int v : vecs()) if (v <= 8) vec = v;
        int tx = 1;
        for (int d : ScheduleTemplate.divisors(n, 8)) tx = d;
        return new ScheduleConfig(NAME, Map.of("vec", vec, "tile_x", tx));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        if (c.knobs().get("vec") instanceof Integer v && (v < 1 || k % v != 0)) {
            throw new InvalidConfigException(NAME + ": vec=" + v + " must divide the reduction length " + k + " (" + workload + ")");
        }
        ConfigSpace.requireDivisor(c, "tile_x", "the output columns ", n, workload);
        space().check(c);
        if (partial != null && c.getInt("vec") != partial.shape().get(2)) {
            throw new InvalidConfigException(NAME + ": vec=" + c.getInt("vec") + " but this compute splits the reduction by " + partial.shape().get(2));
        }
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        List<Primitive> ps = new ArrayList<>();
        List<String> ax = Tiles.axisNames(o);
        String on = o.name(), an = out.name(), rf = partial.name();
        ps.add(new Primitive.Split(on, ax.get(1), c.getInt("tile_x")));
        String fused = Tiles.parallelFused(ps, on, List.of(ax.get(0), ax.get(1) + "_o"));
        if (o.id() != out.id()) ps.add(new Primitive.ComputeAt(an, on, fused));
        // all tile_x accumulators live together: the partial tile is computed once per output tile
        ps.add(new Primitive.ComputeAt(rf, an, o.id() != out.id() ? "i" : fused));
        ps.add(new Primitive.Reorder(rf, List.of("i", "ko", "j", "kk")));
        ps.add(new Primitive.Unroll(rf, "j"));
        ps.add(new Primitive.Vectorize(rf, "kk"));
        return new Schedule(ps);
    }
}
