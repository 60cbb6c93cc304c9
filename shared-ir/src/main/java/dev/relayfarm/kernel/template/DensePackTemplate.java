package dev.relayfarm.kernel.template;

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
 * {@code nn.dense} with the weight packed in column blocks (TVM's {@code dense_pack.x86}):
 * {@code packed[jo, k, ji] = weight[jo*tile_x + ji, k]} (zero-padded), {@code out[i, j] = sum_k
 * data[i, k] * packed[j / tile_x, k, j % tile_x]}: a {@code tile_y x tile_x} register tile with the
 * {@code tile_x} columns as SIMD lanes reading contiguous packed weights, rows unrolled, the
 * reduction split by {@code tile_k} with the inner part unrolled; tiles fused and parallel. The
 * packing is a stage of the kernel (run per call), so this suits batches where it amortizes;
 * {@link DenseNoPackTemplate} reads the weight in place for small batches.
 *
 * <p>The packing block {@code tile_x} changes the compute, so the template is built for one value.
 * {@code tile_order} (optional, see {@link Knob#absentMeans}; absent = {@code rows}, the order before
 * it) walks the tiles column block by column block instead, so a block of packed weights is read
 * once for all rows: the better order when the weights, not the data, are the larger operand. The
 * threads take contiguous runs of the fused tile loop, so the order also says what they divide: row
 * blocks (each thread streams all the weights) or column blocks (each thread its share of them).
 */
public final class DensePackTemplate implements ScheduleTemplate {
    public static final String NAME = "dense_pack.x86";
    /** Longest unrolled reduction step: 16 x tile_y FMAs per weight row already fill the loop body. */
    private static final int MAX_TILE_K = 16;
    private final int m, n, k;
    private final Compute packed, out;
    private final String workload;

    private DensePackTemplate(int m, int n, int k, Compute packed, Compute out, String workload) {
        this.m = m;
        this.n = n;
        this.k = k;
        this.packed = packed;
        this.out = out;
        this.workload = workload;
    }

    /** The template for {@code data [M, K] x weight [N, K]}, its packing built for {@code config}'s tile_x (the default's when absent). */
    public static DensePackTemplate create(Tensor data, Tensor weight, String name, java.util.Optional<ScheduleConfig> config) {
        int m = data.shape().get(0), k = data.shape().get(1), n = weight.shape().get(0);
        String wl = DenseNoPackTemplate.workload(data, weight);
        DensePackTemplate shapeOnly = new DensePackTemplate(m, n, k, null, null, wl);
        ScheduleConfig c = config.orElseGet(shapeOnly::defaultConfig);
        shapeOnly.validate(c);
        int bn = c.getInt("tile_x");
        int no = (n + bn - 1) / bn;
        Compute packed = Te.compute(name + "_wpack", List.of(no, k, bn), List.of("jo", "pk", "ji"), ix -> {
            PrimExpr row = ix.get(0).mul(bn).add(ix.get(2));
            PrimExpr v = weight.at(row, ix.get(1));
            return n % bn == 0 ? v : new Select(row.lt(PrimExpr.of(n)), v, Te.zero(weight.dtype()));
        });
        IterVar r = Te.reduceAxis("rk", k);
        Compute out = Te.compute(name, List.of(m, n), List.of("i", "j"), ix -> Te.sum(
                data.at(ix.get(0), r.var()).mul(packed.at(ix.get(1).div(bn), r.var(), ix.get(1).mod(bn))), r));
        return new DensePackTemplate(m, n, k, packed, out, wl);
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
        return List.of(packed, out);
    }

    private List<Integer> tileX() {
        List<Integer> xs = new ArrayList<>();
        for (int b : List.of(8, 16, 32)) if (b <= Math.max(8, n)) xs.add(b);
        if (n < 8) xs.addFirst(n);
        return xs;
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("tile_y", ScheduleTemplate.divisors(m, 8), "rows per register tile (unrolled), a divisor of the batch " + m),
                Knob.ints("tile_x", tileX(), "columns per register tile = the weight packing block (SIMD lanes)"),
                Knob.ints("tile_k", ScheduleTemplate.divisors(k, MAX_TILE_K), "reduction steps unrolled together, a divisor of " + k),
                Knob.choices("tile_order", List.of("rows", "cols"),
                        "order of the tiles (fused, then spread across threads): rows = a row block's column tiles in turn (its data rows stay in cache); "
                                + "cols = a column block's row tiles in turn (its packed weights stay in cache, the data is re-read)")
                        .absentMeans("rows")));
    }

    @Override
    public ScheduleConfig defaultConfig() {
        int ty = 1;
        for (int d : ScheduleTemplate.divisors(m, 4)) ty = d;
        // a tile_x the space offers: 16 only from 16 columns on (with 8 to 15 columns tileX() has just 8)
        int tx = n < 8 ? n : n < 16 ? 8 : 16;
        int tk = 1;
        for (int d : ScheduleTemplate.divisors(k, 2)) tk = d;
        return new ScheduleConfig(NAME, Map.of("tile_y", ty, "tile_x", tx, "tile_k", tk));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        ConfigSpace.requireDivisor(c, "tile_y", "the batch ", m, workload);
        ConfigSpace.requireDivisor(c, "tile_k", "the reduction length ", k, workload);
        space().check(c);
        if (out != null && c.getInt("tile_x") != packed.shape().get(2)) {
            throw new InvalidConfigException(NAME + ": tile_x=" + c.getInt("tile_x") + " but this compute was packed by " + packed.shape().get(2));
        }
    }

    @Override
    public Schedule schedule(ScheduleConfig config, Compute o) {
        validate(config);
        ScheduleConfig c = space().complete(config);
        String p = packed.name();
        List<Primitive> ps = new ArrayList<>(List.of(
                new Primitive.Parallel(p, "jo"),
                // read weight rows in order; the strided writes stay in cache
                new Primitive.Reorder(p, List.of("ji", "pk"))));
        String local = Tiles.cacheOrAttach(ps, out, o);
        List<String> ax = Tiles.axisNames(o);
        String on = o.name();
        ps.add(new Primitive.Tile(on, ax.get(0), ax.get(1), c.getInt("tile_y"), c.getInt("tile_x")));
        List<String> tiles = List.of(ax.get(0) + "_o", ax.get(1) + "_o");
        if (c.getString("tile_order").equals("cols")) {
            tiles = tiles.reversed();
            ps.add(new Primitive.Reorder(on, tiles));
        }
        String fused = Tiles.parallelFused(ps, on, tiles);
        ps.add(new Primitive.Vectorize(on, ax.get(1) + "_i"));
        ps.add(new Primitive.ComputeAt(local, on, fused));
        int tk = c.getInt("tile_k");
        if (tk > 1) {
            ps.add(new Primitive.Split(local, "rk", tk));
            ps.add(new Primitive.Reorder(local, List.of("rk_o", "rk_i", "i", "j")));
            ps.add(new Primitive.Unroll(local, "rk_i"));
        } else {
            ps.add(new Primitive.Reorder(local, List.of("rk", "i", "j")));
        }
        ps.add(new Primitive.Unroll(local, "i"));
        ps.add(new Primitive.Vectorize(local, "j"));
        return new Schedule(ps);
    }
}
