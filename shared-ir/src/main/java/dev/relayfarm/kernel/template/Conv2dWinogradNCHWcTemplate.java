package dev.relayfarm.kernel.template;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.WinogradMatrices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * {@code nn.contrib_conv2d_winograd_NCHWc}: Winograd F(m x m, 3 x 3) (TVM's x86 {@code conv2d_winograd} in the
 * blocked layouts) on data {@code NCHW[ic]c}, the weight already transformed at compile time to
 * {@code U [alpha, alpha, OC/oc, IC/ic, ic, oc]}, output {@code NCHW[oc]c}; {@code alpha = m + 2}, P tiles of
 * m x m outputs ({@code P = N * ceil(OH/m) * ceil(OW/m)}, tile {@code p = (n * TH + th) * TW + tw}). Stages:
 * <pre>
 * pad[n, c, y, x, cb]      the input padded so that every tile's alpha x alpha window is inside (bottom/right
 *                          beyond the convolution's padding when m does not divide the output)
 * V[e, u, p, c, cb]        = (B^T d B)[e, u] of tile p's window d           (input transform)
 * M[e, u, p, k, kb]        = sum_{c, cb} V[e, u, p, c, cb] * U[e, u, k, c, cb, kb]   (batched GEMM, the hot stage)
 * Y[n, k, oh, ow, kb]      = (A^T M A)[oh % m, ow % m] of tile (n, oh / m, ow / m)   (output transform)
 * </pre>
 * The transforms are written out term by term: each element is a sum over the matrices' non-zero entries
 * only, chosen by a {@code Select} on the tile position that the unrolled loops make constant, so the C
 * compiler keeps just that position's terms. Schedule: V per (tile, channel chunk) with the alpha x alpha
 * positions unrolled and the channel block as SIMD lanes; M register-tiled like {@link Conv2dNCHWcTemplate}
 * ({@code reg_n} tiles x {@code oc_vec} channels accumulated in registers, the input-channel reduction
 * outside the tile, channels as lanes), (e, u) spread across threads; Y computed in the epilogue's loops
 * (bias, relu, ... arrive as the output stage {@code o}) split by m with the tile position unrolled.
 *
 * <p>Knobs: {@code tile_size} and {@code ic_bn}/{@code oc_bn} (fixed by the transformed weight and layouts),
 * {@code reg_n} (tiles per register tile, a divisor of P), {@code oc_vec} (channels per register tile, a
 * divisor of oc_bn), {@code gemm_order} ({@code oc_p}: each weight block's tiles in turn, its U block stays
 * in cache; {@code p_oc}: each tile group's channel chunks in turn).
 */
public final class Conv2dWinogradNCHWcTemplate implements ScheduleTemplate {
    public static final String NAME = "conv2d_winograd_NCHWc.x86";
    private static final int LANES = 8, MAX_ACCUMULATORS = 14, SATURATING_ACCUMULATORS = 8;

    private final Compute pad, v, gemm, out;
    private final int m, icBn, ocBn, tiles;
    private final String workload;

    private Conv2dWinogradNCHWcTemplate(Compute pad, Compute v, Compute gemm, Compute out, int m, int icBn, int ocBn, int tiles, String workload) {
        this.pad = pad;
        this.v = v;
        this.gemm = gemm;
        this.out = out;
        this.m = m;
        this.icBn = icBn;
        this.ocBn = ocBn;
        this.tiles = tiles;
        this.workload = workload;
    }

    /** Whether data {@code [N, IC/ic, H, W, ic]} and transformed weight {@code [alpha, alpha, OC/oc, IC/ic, ic, oc]} fit F(m x m, 3 x 3). */
    public static boolean applies(List<Integer> data, List<Integer> u, int m) {
        return WinogradMatrices.supports(m) && data.size() == 5 && u.size() == 6 && u.get(0) == m + 2 && u.get(1) == m + 2
                && u.get(3).equals(data.get(1)) && u.get(4).equals(data.get(4));
    }

    /**
     * The stages for data {@code [N, IC/ic, H, W, ic]}, transformed weight {@code U} and padding
     * {@code (top, left, bottom, right)}; the output transform is named {@code name}.
     */
    public static Conv2dWinogradNCHWcTemplate create(Tensor data, Tensor u, int m, int[] padding, String name) {
        List<Integer> ds = data.shape(), us = u.shape();
        if (!applies(ds, us, m)) {
            throw new IllegalArgumentException("conv2d_winograd_NCHWc needs data [N, IC/ic, H, W, ic] and weight [alpha, alpha, OC/oc, IC/ic, ic, oc] with alpha = "
                    + (m + 2) + ", got " + ds + " and " + us);
        }
        int n = ds.get(0), icChunks = ds.get(1), h = ds.get(2), w = ds.get(3), ic = ds.get(4);
        int alpha = m + 2, ocChunks = us.get(2), oc = us.get(5);
        int pt = padding[0], pl = padding[1];
        int oh = h + pt + padding[2] - 2, ow = w + pl + padding[3] - 2;
        if (oh <= 0 || ow <= 0) throw new IllegalArgumentException("conv2d_winograd_NCHWc: a 3x3 kernel does not fit the padded input of " + ds);
        int th = (oh + m - 1) / m, tw = (ow + m - 1) / m, p = n * th * tw;
        DType dt = data.dtype();
        double[][] bt = WinogradMatrices.bt(m), at = WinogradMatrices.at(m);
        Compute pad = Tiles.padBlocked(data, name, th * m + 2, tw * m + 2, pt, pl);
        Compute v = Te.compute(name + "_v", List.of(alpha, alpha, p, icChunks, ic), List.of("e", "u", "p", "c", "cb"), ix -> {
            PrimExpr tile = ix.get(2), b = tile.div(th * tw), y0 = tile.div(tw).mod(th).mul(m), x0 = tile.mod(tw).mul(m);
            return select(ix.get(0), alpha, e -> select(ix.get(1), alpha, nu -> {
                List<double[]> terms = new ArrayList<>();
                for (int r = 0; r < alpha; r++) for (int s = 0; s < alpha; s++) if (bt[e][r] * bt[nu][s] != 0) terms.add(new double[] {bt[e][r] * bt[nu][s], r, s});
                return linear(dt, terms, t -> pad.at(b, ix.get(3), y0.add((int) t[1]), x0.add((int) t[2]), ix.get(4)));
            }));
        });
        IterVar rc = Te.reduceAxis("ic_chunk", icChunks), rb = Te.reduceAxis("ic_block", ic);
        Compute gemm = Te.compute(name + "_gemm", List.of(alpha, alpha, p, ocChunks, oc), List.of("e", "u", "p", "oc_chunk", "oc_block"), ix -> Te.sum(
                v.at(ix.get(0), ix.get(1), ix.get(2), rc.var(), rb.var()).mul(u.at(ix.get(0), ix.get(1), ix.get(3), rc.var(), rb.var(), ix.get(4))), rc, rb));
        Compute out = Te.compute(name, List.of(n, ocChunks, oh, ow, oc), List.of("n", "oc_chunk", "oh", "ow", "oc_block"), ix -> {
            PrimExpr tile = ix.get(0).mul(th).add(ix.get(2).div(m)).mul(tw).add(ix.get(3).div(m));
            return select(ix.get(2).mod(m), m, i -> select(ix.get(3).mod(m), m, j -> {
                List<double[]> terms = new ArrayList<>();
                for (int e = 0; e < alpha; e++) for (int nu = 0; nu < alpha; nu++) if (at[i][e] * at[j][nu] != 0) terms.add(new double[] {at[i][e] * at[j][nu], e, nu});
                return linear(dt, terms, t -> gemm.at(PrimExpr.of((int) t[1]), PrimExpr.of((int) t[2]), tile, ix.get(1), ix.get(4)));
            }));
        });
        String wl = ("nn.contrib_conv2d_winograd_NCHWc(data" + ds + ",weight" + us + ",tile_size=" + m + ",padding="
                + padding[0] + "," + padding[1] + "," + padding[2] + "," + padding[3] + ")").replace(" ", "");
        return new Conv2dWinogradNCHWcTemplate(pad, v, gemm, out, m, ic, oc, p, wl);
    }

    /** {@code Select(index == 0, body(0), Select(index == 1, body(1), ... body(n - 1)))}. */
    private static PrimExpr select(PrimExpr index, int n, IntFunction<PrimExpr> body) {
        PrimExpr e = body.apply(n - 1);
        for (int k = n - 2; k >= 0; k--) e = new Select(new Binary(BinaryOp.EQ, index, PrimExpr.of(k)), body.apply(k), e);
        return e;
    }

    /** {@code sum_t t[0] * load(t)}, a coefficient of 1 or -1 written as an add or a subtract. */
    private static PrimExpr linear(DType dt, List<double[]> terms, java.util.function.Function<double[], PrimExpr> load) {
        PrimExpr acc = null;
        for (double[] t : terms) {
            PrimExpr x = load.apply(t);
            double c = t[0];
            if (acc == null) acc = c == 1 ? x : x.mul(Te.constant(dt, c));
            else if (c == 1) acc = acc.add(x);
            else if (c == -1) acc = acc.sub(x);
            else acc = acc.add(x.mul(Te.constant(dt, c)));
        }
        return acc == null ? Te.zero(dt) : acc;
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
        return List.of(pad, v, gemm, out);
    }

    @Override
    public ConfigSpace space() {
        return new ConfigSpace(NAME, List.of(
                Knob.ints("tile_size", List.of(m), "output tile m of F(m x m, 3 x 3), fixed by the transformed weight"),
                Knob.ints("ic_bn", List.of(icBn), "input channel block, fixed by the data layout NCHW" + icBn + "c"),
                Knob.ints("oc_bn", List.of(ocBn), "output channel block, fixed by the output layout NCHW" + ocBn + "c"),
                Knob.ints("reg_n", regNCandidates(), "tiles per register tile, a divisor of the tile count " + tiles + " that fits the registers"),
                Knob.ints("oc_vec", ocVecCandidates(), "output channels per register tile (SIMD lanes), a divisor of oc_bn=" + ocBn),
                Knob.choices("gemm_order", List.of("oc_p", "p_oc"), "GEMM tile loops: oc_p = the tiles of one weight block in turn; p_oc = the channel chunks of one tile group in turn")));
    }

    private List<Integer> regNCandidates() {
        List<Integer> out = new ArrayList<>();
        for (int d : ScheduleTemplate.divisors(tiles, MAX_ACCUMULATORS)) out.add(d);
        return out;
    }

    private List<Integer> ocVecCandidates() {
        List<Integer> out = new ArrayList<>();
        for (int d : ScheduleTemplate.divisors(ocBn, ocBn)) if (d == ocBn || d % LANES == 0) out.add(d);
        return out;
    }

    private static int vectors(int ocVec) {
        return Math.max(1, (ocVec + LANES - 1) / LANES);
    }

    /** The (reg_n, oc_vec) with enough accumulators to hide the FMA latency and the fewest loads per FMA (as the direct template's fallback). */
    @Override
    public ScheduleConfig defaultConfig() {
        int bestN = 1, bestV = ocBn;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int vv : ocVecCandidates()) {
            for (int n : regNCandidates()) {
                int acc = n * vectors(vv);
                if (acc > MAX_ACCUMULATORS) continue;
                double loadsPerFma = (double) (n + vectors(vv)) / acc;
                double score = acc >= SATURATING_ACCUMULATORS ? 1000 - 100 * loadsPerFma + acc : acc;
                if (score > bestScore) {
                    bestScore = score;
                    bestN = n;
                    bestV = vv;
                }
            }
        }
        return new ScheduleConfig(NAME, Map.of("tile_size", m, "ic_bn", icBn, "oc_bn", ocBn, "reg_n", bestN, "oc_vec", bestV, "gemm_order", "oc_p"));
    }

    @Override
    public void validate(ScheduleConfig c) {
        ConfigSpace.requireTemplate(c, NAME);
        for (var fixed : Map.of("tile_size", m, "ic_bn", icBn, "oc_bn", ocBn).entrySet()) {
            if (c.knobs().get(fixed.getKey()) instanceof Integer i && i != (int) fixed.getValue()) {
                throw new InvalidConfigException(NAME + ": " + fixed.getKey() + "=" + i + " but " + workload + " has " + fixed.getValue());
            }
        }
        ConfigSpace.requireDivisor(c, "reg_n", "the tile count ", tiles, workload);
        ConfigSpace.requireDivisor(c, "oc_vec", "oc_bn=", ocBn, workload);
        space().check(c);
        int acc = c.getInt("reg_n") * vectors(c.getInt("oc_vec"));
        if (acc > MAX_ACCUMULATORS) {
            throw new InvalidConfigException(NAME + ": reg_n=" + c.getInt("reg_n") + " x oc_vec=" + c.getInt("oc_vec") + " needs " + acc
                    + " accumulator vectors; at most " + MAX_ACCUMULATORS + " fit the registers (" + workload + ")");
        }
    }

    @Override
    public Schedule schedule(ScheduleConfig c, Compute o) {
        validate(c);
        int regN = c.getInt("reg_n"), ocVec = c.getInt("oc_vec");
        List<Primitive> ps = new ArrayList<>();
        // padding: whole rows of channel blocks, across threads
        Tiles.parallelFused(ps, pad.name(), List.of("pn", "pc", "ph"));
        ps.add(new Primitive.Vectorize(pad.name(), "pb"));
        // input transform: per (tile, channel chunk), every (e, u) position unrolled, channel block as lanes
        String vn = v.name();
        ps.add(new Primitive.Reorder(vn, List.of("p", "c", "e", "u", "cb")));
        Tiles.parallelFused(ps, vn, List.of("p", "c"));
        ps.add(new Primitive.Unroll(vn, "e"));
        ps.add(new Primitive.Unroll(vn, "u"));
        ps.add(new Primitive.Vectorize(vn, "cb"));
        // batched GEMM: reg_n tiles x oc_vec channels in registers, the input channels reduced around them
        String g = gemm.name();
        ps.add(new Primitive.CacheWrite(g));
        String local = g + "_local";
        ps.add(new Primitive.Split(g, "p", regN));
        List<String> order = new ArrayList<>(List.of("e", "u"));
        String lanes = "oc_block";
        if (ocVec < ocBn) ps.add(new Primitive.Split(g, "oc_block", ocVec));
        if (c.getString("gemm_order").equals("oc_p")) {
            order.add("oc_chunk");
            if (ocVec < ocBn) order.add("oc_block_o");
            order.add("p_o");
        } else {
            order.add("p_o");
            order.add("oc_chunk");
            if (ocVec < ocBn) order.add("oc_block_o");
        }
        order.add("p_i");
        if (ocVec < ocBn) lanes = "oc_block_i";
        order.add(lanes);
        ps.add(new Primitive.Reorder(g, order));
        Tiles.parallelFused(ps, g, List.of("e", "u"));
        ps.add(new Primitive.Vectorize(g, lanes));
        ps.add(new Primitive.ComputeAt(local, g, order.get(order.size() - 3)));
        ps.add(new Primitive.Reorder(local, List.of("e", "u", "oc_chunk", "ic_chunk", "ic_block", "p", "oc_block")));
        ps.add(new Primitive.Unroll(local, "p"));
        ps.add(new Primitive.Vectorize(local, "oc_block"));
        // output transform in the epilogue's loops: m x m output positions unrolled, channel block as lanes
        if (o.id() != out.id()) {
            if (!o.shape().equals(out.shape())) throw new IllegalArgumentException("epilogue output " + o.name() + o.shape() + " does not have the shape of anchor " + out.name() + out.shape());
            ps.add(new Primitive.ComputeInline(out.name()));
        }
        List<String> ax = Tiles.axisNames(o);
        String on = o.name();
        ps.add(new Primitive.Split(on, ax.get(2), m));
        ps.add(new Primitive.Split(on, ax.get(3), m));
        ps.add(new Primitive.Reorder(on, List.of(ax.get(0), ax.get(1), ax.get(2) + "_o", ax.get(3) + "_o", ax.get(2) + "_i", ax.get(3) + "_i", ax.get(4))));
        Tiles.parallelFused(ps, on, List.of(ax.get(0), ax.get(1), ax.get(2) + "_o"));
        ps.add(new Primitive.Unroll(on, ax.get(2) + "_i"));
        ps.add(new Primitive.Unroll(on, ax.get(3) + "_i"));
        ps.add(new Primitive.Vectorize(on, ax.get(4)));
        return new Schedule(ps);
    }
}
