package dev.relayfarm.ops.transform;

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
 * {@code broadcast_to(data, shape=[...])} with numpy's rules: dims are aligned from the right, and
 * each input dim must be 1 or equal to the target's. An Any or symbolic input dim is accepted
 * against any target dim (checked at run time by the kernel). TVM gives this op InitOpAttrs, so a
 * {@code dtype} attribute is accepted and ignored: the output keeps the input's dtype.
 */
public final class BroadcastTo {
    private BroadcastTo() {}

    public record BroadcastToAttrs(List<Long> shape) {}

    public static final OpDef<BroadcastToAttrs> DEF = new OpDef<>(
            "broadcast_to", 1, BroadcastTo::parse, BroadcastTo::relation, OpPattern.BROADCAST, BroadcastTo::compute);

    static BroadcastToAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("broadcast_to", attrs);
        if (!r.has("shape")) throw new RelationException("broadcast_to: attribute 'shape' is required");
        BroadcastToAttrs a = new BroadcastToAttrs(Args.boxed(r.longs("shape")));
        r.string("dtype", "");
        r.finish();
        for (long d : a.shape()) if (d < 0) throw new RelationException("broadcast_to: shape " + a.shape() + " has a negative dim " + d);
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, BroadcastToAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("broadcast_to", types, 0, "data");
        if (data == null) return false;
        check(data.shape(), a.shape());
        List<Dim> out = new ArrayList<>();
        for (long d : a.shape()) out.add(Dim.of(d));
        reporter.assign(types.get(1), new TensorType(out, data.dtype()));
        return true;
    }

    private static void check(List<Dim> in, List<Long> target) {
        String what = "broadcast_to: cannot broadcast " + Args.show(in) + " to " + Args.showLongs(target);
        if (in.size() > target.size()) throw new RelationException(what + ": the input has more dims than the target");
        int lead = target.size() - in.size();
        for (int i = 0; i < in.size(); i++) {
            Dim d = in.get(i);
            long t = target.get(lead + i);
            if (d.isStatic() && d.value() != 1 && d.value() != t) {
                throw new RelationException(what + ": input dim " + i + " is " + d + ", must be 1 or " + t);
            }
        }
    }

    private static List<NDArray> compute(List<NDArray> in, BroadcastToAttrs a) {
        NDArray x = in.getFirst();
        int[] s = x.shape();
        check(Args.dims(s), a.shape());
        long[] st = Movement.strides(s);
        int rank = a.shape().size();
        int lead = rank - s.length;
        int[] outShape = new int[rank];
        long[] viewStrides = new long[rank];
        for (int i = 0; i < rank; i++) {
            outShape[i] = Math.toIntExact(a.shape().get(i));
            // Stride 0 repeats the one element along a broadcast dim.
            viewStrides[i] = i < lead || s[i - lead] == 1 ? 0 : st[i - lead];
        }
        return List.of(Movement.view(x, outShape, 0, viewStrides));
    }
}
