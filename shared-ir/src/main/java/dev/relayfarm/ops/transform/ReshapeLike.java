package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
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
 * {@code reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None)}:
 * replaces {@code data}'s dims {@code [lhs_begin, lhs_end)} by {@code shape_like}'s dims
 * {@code [rhs_begin, rhs_end)} (by default: takes the whole shape of {@code shape_like}). The
 * element counts must agree where both are static.
 */
public final class ReshapeLike {
    private ReshapeLike() {}

    /** The ends are null for "to the end". */
    public record ReshapeLikeAttrs(long lhsBegin, Long lhsEnd, long rhsBegin, Long rhsEnd) {}

    public static final OpDef<ReshapeLikeAttrs> DEF = new OpDef<>(
            "reshape_like", 2, ReshapeLike::parse, ReshapeLike::relation, OpPattern.INJECTIVE, (in, a) -> {
                List<Dim> out = outShape(a, Args.dims(in.get(0).shape()), Args.dims(in.get(1).shape()));
                return List.of(Movement.reshaped(in.get(0), Args.ints(out)));
            });

    static ReshapeLikeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("reshape_like", attrs);
        Long lhsEnd = r.has("lhs_end") ? r.integer("lhs_end", 0) : null;
        Long rhsEnd = r.has("rhs_end") ? r.integer("rhs_end", 0) : null;
        r.integer("lhs_end", 0); // marks an explicit None as read
        r.integer("rhs_end", 0);
        ReshapeLikeAttrs a = new ReshapeLikeAttrs(r.integer("lhs_begin", 0), lhsEnd, r.integer("rhs_begin", 0), rhsEnd);
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ReshapeLikeAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("reshape_like", types, 0, "data");
        TensorType like = Args.tensor("reshape_like", types, 1, "shape_like");
        if (data == null || like == null) return false;
        reporter.assign(types.get(2), new TensorType(outShape(a, data.shape(), like.shape()), data.dtype()));
        return true;
    }

    private static int bound(long v, int rank, String what) {
        long b = v < 0 ? v + rank : v;
        if (b < 0 || b > rank) throw new RelationException("reshape_like: " + what + " " + v + " is out of range for rank " + rank);
        return (int) b;
    }

    static List<Dim> outShape(ReshapeLikeAttrs a, List<Dim> data, List<Dim> like) {
        int lb = bound(a.lhsBegin(), data.size(), "lhs_begin");
        int le = a.lhsEnd() == null ? data.size() : bound(a.lhsEnd(), data.size(), "lhs_end");
        int rb = bound(a.rhsBegin(), like.size(), "rhs_begin");
        int re = a.rhsEnd() == null ? like.size() : bound(a.rhsEnd(), like.size(), "rhs_end");
        if (le < lb || re < rb) throw new RelationException("reshape_like: empty or reversed dim range in " + a);
        List<Dim> out = new ArrayList<>(data.subList(0, lb));
        out.addAll(like.subList(rb, re));
        out.addAll(data.subList(le, data.size()));
        Dim before = Dims.product(data);
        Dim after = Dims.product(out);
        if (before.isStatic() && after.isStatic() && before.value() != after.value()) {
            throw new RelationException("reshape_like: cannot reshape " + Args.show(data) + " (" + before + " elements) into "
                    + Args.show(out) + " (" + after + " elements)");
        }
        return out;
    }
}
