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
 * {@code reshape(data, newshape=[...], allowzero=False)} with TVM's special values:
 * {@code 0} copies the input dim at the same position (or means size 0 with {@code allowzero}),
 * {@code -1} is inferred from the remaining size, {@code -2} copies all remaining input dims,
 * {@code -3} merges the next two input dims, {@code -4, a, b} splits the next input dim into
 * {@code a * b} (one of them may be -1).
 * <pre>
 * reshape(Tensor[(2, 3, 4)], newshape=[0, -1])  : Tensor[(2, 12)]
 * reshape(Tensor[(n, 3, 4)], newshape=[-1, 4])  : Tensor[(3 * n, 4)]
 * </pre>
 */
public final class Reshape {
    private Reshape() {}

    public record ReshapeAttrs(List<Long> newshape, boolean allowzero) {}

    public static final OpDef<ReshapeAttrs> DEF = new OpDef<>(
            "reshape", 1, Reshape::parse, Reshape::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                return List.of(Movement.reshaped(x, Args.ints(outShape(a, Args.dims(x.shape())))));
            });

    static ReshapeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("reshape", attrs);
        if (!r.has("newshape")) throw new RelationException("reshape: attribute 'newshape' is required");
        ReshapeAttrs a = new ReshapeAttrs(Args.boxed(r.longs("newshape")), r.bool("allowzero", false));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ReshapeAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("reshape", types, 0, "data");
        if (data == null) return false;
        reporter.assign(types.get(1), new TensorType(outShape(a, data.shape()), data.dtype()));
        return true;
    }

    /** The output shape; shared by the relation and the kernel so both apply the same rules. */
    static List<Dim> outShape(ReshapeAttrs a, List<Dim> in) {
        List<Long> ns = a.newshape();
        List<Dim> out = new ArrayList<>();
        // For each output dim, the input dim it copies (0 or -2), else -1: copies cancel exactly in
        // the -1 inference even when they are Any.
        List<Integer> copied = new ArrayList<>();
        int src = 0;
        int infer = -1;
        for (int i = 0; i < ns.size(); i++) {
            long v = ns.get(i);
            if (v > 0) {
                copied.add(-1);
                out.add(Dim.of(v));
                src++;
            } else if (v == 0) {
                if (a.allowzero()) {
                    copied.add(-1);
                    out.add(Dim.of(0));
                } else {
                    if (src >= in.size()) throw bad(in, ns, "0 at position " + i + " copies input dim " + src + " but the input has rank " + in.size());
                    copied.add(src);
                    out.add(in.get(src));
                }
                src++;
            } else if (v == -1) {
                if (infer >= 0) throw bad(in, ns, "only one -1 is allowed");
                infer = out.size();
                copied.add(-1);
                out.add(Dim.of(1));
                src++;
            } else if (v == -2) {
                while (src < in.size()) {
                    copied.add(src);
                    out.add(in.get(src++));
                }
            } else if (v == -3) {
                if (src + 1 >= in.size()) throw bad(in, ns, "-3 at position " + i + " merges input dims " + src + " and " + (src + 1) + " but the input has rank " + in.size());
                copied.add(-1);
                out.add(Dims.mul(in.get(src), in.get(src + 1)));
                src += 2;
            } else if (v == -4) {
                if (i + 2 >= ns.size()) throw bad(in, ns, "-4 at position " + i + " must be followed by two sizes");
                if (src >= in.size()) throw bad(in, ns, "-4 at position " + i + " splits input dim " + src + " but the input has rank " + in.size());
                Dim d = in.get(src++);
                long p = ns.get(i + 1);
                long q = ns.get(i + 2);
                if (p == -1 && q == -1 || p < -1 || q < -1 || p == 0 || q == 0) {
                    throw bad(in, ns, "-4 at position " + i + " needs two positive sizes (one may be -1), got " + p + ", " + q);
                }
                Dim dp = p == -1 ? exactDiv(in, ns, d, Dim.of(q)) : Dim.of(p);
                Dim dq = q == -1 ? exactDiv(in, ns, d, Dim.of(p)) : Dim.of(q);
                if (p != -1 && q != -1 && d.isStatic() && d.value() != p * q) {
                    throw bad(in, ns, "-4 splits input dim " + (src - 1) + " of size " + d + " into " + p + " * " + q);
                }
                copied.add(-1);
                out.add(dp);
                copied.add(-1);
                out.add(dq);
                i += 2;
            } else {
                throw bad(in, ns, "invalid special value " + v);
            }
        }
        Dim total = Dims.product(in);
        if (infer >= 0) {
            List<Dim> known = new ArrayList<>(out);
            known.remove(infer);
            Dim k = Dims.product(known);
            if (k.isStatic() && k.value() == 0) throw bad(in, ns, "-1 cannot be inferred next to a zero-size dim");
            List<Dim> rest = new ArrayList<>();
            for (int i = 0; i < in.size(); i++) if (!copied.contains(i)) rest.add(in.get(i));
            List<Dim> restKnown = new ArrayList<>();
            for (int i = 0; i < out.size(); i++) if (i != infer && copied.get(i) < 0) restKnown.add(out.get(i));
            out.set(infer, inferred(in, rest, restKnown, ns));
        } else {
            Dim produced = Dims.product(out);
            if (total.isStatic() && produced.isStatic() && total.value() != produced.value()) throw bad(in, ns, null);
        }
        return out;
    }

    /**
     * The -1 dim: product(in) / product(known). Symbolic factors that appear on both sides cancel
     * first ({@code (n, 3, 4) -> (0, -1)} gives 12, not {@code 12 * n / n}), since {@link Dims}
     * only divides by constants.
     */
    private static Dim inferred(List<Dim> in, List<Dim> rest, List<Dim> known, List<Long> ns) {
        List<Dim> num = new ArrayList<>();
        long numConst = 1;
        for (Dim d : rest) {
            Dim s = Dims.simplify(d);
            if (s instanceof Dim.Any) return Dim.ANY;
            if (s.isStatic()) numConst *= s.value();
            else num.add(s);
        }
        List<Dim> den = new ArrayList<>();
        long denConst = 1;
        for (Dim d : known) {
            Dim s = Dims.simplify(d);
            if (s instanceof Dim.Any) return Dim.ANY;
            if (s.isStatic()) denConst *= s.value();
            else if (!num.remove(s)) den.add(s);
        }
        if (den.isEmpty() && num.isEmpty()) return exactDiv(in, ns, Dim.of(numConst), Dim.of(denConst));
        if (den.isEmpty() && numConst % denConst == 0) return Dims.mul(Dims.product(num), Dim.of(numConst / denConst));
        return Dims.div(Dims.mul(Dims.product(num), Dim.of(numConst)), Dims.mul(Dims.product(den), Dim.of(denConst)));
    }

    private static Dim exactDiv(List<Dim> in, List<Long> ns, Dim total, Dim by) {
        if (total.isStatic() && by.isStatic() && (by.value() == 0 || total.value() % by.value() != 0)) throw bad(in, ns, null);
        return Dims.div(total, by);
    }

    private static RelationException bad(List<Dim> in, List<Long> ns, String why) {
        Dim total = Dims.product(in);
        String count = total.isStatic() ? " (" + total + " elements)" : "";
        return new RelationException("reshape: cannot reshape " + Args.show(in) + count + " into " + Args.showLongs(ns)
                + (why == null ? "" : ": " + why));
    }
}
