package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nn.max_pool3d} / {@code nn.avg_pool3d(data, pool_size, strides=[1, 1, 1], dilation=[1, 1, 1],
 * padding=[0, 0, 0], layout="NCDHW", out_layout="", ceil_mode=False[, count_include_pad=False])}: TVM's
 * 3-D pools, with the semantics of {@link Pool2D} (padding counts as the lowest value for max; the avg
 * divisor counts positions inside the input, or inside input + padding with count_include_pad, never
 * the extra ceil_mode cells). Only NCDHW: nothing in the compiler packs 5-D pooling layouts.
 * {@code padding} is {front, top, left, back, bottom, right} (1, 3 or 6 values, as get_pad_tuple3d).
 * {@code max_pool3d(Tensor[(1, 3, 32, 32, 32)], pool_size=[2, 2, 2], strides=[2, 2, 2]) : Tensor[(1, 3, 16, 16, 16)]}.
 * The reference kernel iterates any number of spatial axes; the TE compute is PoolComputes.pool3d.
 */
public final class Pool3D {
    private Pool3D() {}

    private static final int SPATIAL = 3;
    private static final String[] AXES = {"depth", "height", "width"};

    public record Pool3DAttrs(int[] poolSize, int[] strides, int[] dilation, int[] padding, boolean ceilMode, boolean countIncludePad) {}

    public static OpDef<Pool3DAttrs> maxPool() {
        return def("nn.max_pool3d", true);
    }

    public static OpDef<Pool3DAttrs> avgPool() {
        return def("nn.avg_pool3d", false);
    }

    private static OpDef<Pool3DAttrs> def(String name, boolean max) {
        return new OpDef<>(name, 1, attrs -> parse(name, attrs, max), (types, n, a, rep) -> relation(name, types, a, rep),
                OpPattern.OUT_ELEMWISE_FUSABLE, (in, a) -> List.of(compute(in.get(0), a, max)));
    }

    static Pool3DAttrs parse(String op, Attrs attrs, boolean max) {
        AttrReader r = new AttrReader(op, attrs);
        if (!r.has("pool_size")) throw new RelationException(op + ": attribute 'pool_size' is required");
        int[] poolSize = Rel.triple(op, "pool_size", r.ints("pool_size"));
        int[] strides = Rel.triple(op, "strides", r.ints("strides", 1, 1, 1));
        int[] dilation = Rel.triple(op, "dilation", r.ints("dilation", 1, 1, 1));
        int[] padding = Rel.pad6(op, "padding", r.ints("padding", 0, 0, 0));
        String layout = r.string("layout", "NCDHW");
        String outLayout = r.string("out_layout", "");
        boolean ceil = r.bool("ceil_mode", false);
        boolean countPad = !max && r.bool("count_include_pad", false);
        r.finish();
        if (!layout.equals("NCDHW") || !(outLayout.isEmpty() || outLayout.equals("NCDHW"))) {
            throw new RelationException(op + ": only layout NCDHW is supported, got layout \"" + layout + "\", out_layout \"" + outLayout + "\"");
        }
        Rel.positive(op, "pool_size", poolSize);
        Rel.positive(op, "strides", strides);
        Rel.positive(op, "dilation", dilation);
        Rel.nonNegative(op, "padding", padding);
        return new Pool3DAttrs(poolSize, strides, dilation, padding, ceil, countPad);
    }

    static boolean relation(String op, List<Type> types, Pool3DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        if (data.rank() != 2 + SPATIAL) throw new RelationException(op + ": data must have rank 5 for layout NCDHW, got " + data);
        List<Dim> out = new ArrayList<>(data.shape().subList(0, 2));
        for (int i = 0; i < SPATIAL; i++) {
            out.add(PoolWindows.outDim(op, AXES[i], data.shape().get(2 + i), a.poolSize()[i], a.strides()[i], a.padding()[i],
                    a.padding()[SPATIAL + i], a.dilation()[i], a.ceilMode()));
        }
        reporter.assign(types.get(1), new TensorType(out, data.dtype()));
        return true;
    }

    static NDArray compute(NDArray x, Pool3DAttrs a, boolean max) {
        return PoolWindows.poolNd(x, a.poolSize(), a.strides(), a.dilation(), a.padding(), a.ceilMode(), a.countIncludePad(), max);
    }
}
