package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One rewrite of {@link SimplifyExpr}, MLIR-style: it matches an operator call (whose arguments are
 * already simplified) and returns its replacement, or null when it does not apply. Every pattern
 * keeps the value and the type of the call: a pattern that drops an operation first checks with
 * the types that the result type is exactly the operand's type.
 */
sealed interface SimplifyPattern {
    /** The replacement of {@code call}, or null. */
    Expr apply(Call call, ExprTypes types);

    /** Operators that only reshape: they keep the row-major order of the elements. */
    Set<String> RESHAPES = Set.of("reshape", "squeeze", "expand_dims");

    /** All patterns, in the order they are tried. */
    List<SimplifyPattern> ALL = List.of(new ReshapeOfReshape(), new NoopReshape(), new InverseReshapes(),
            new TransposeOfTranspose(), new IdentityTranspose(), new ArithmeticIdentity(), new CastToSameType(), new DropCopy(), new ConcatenateEmptyOperand());

    /**
     * {@code reshape(r(x))} with {@code r} a reshape/squeeze/expand_dims ==> {@code reshape(x)} to the
     * outer shape (written out when static; else the outer newshape when it only uses positive sizes
     * and -1, which do not refer to the input's dims).
     */
    record ReshapeOfReshape() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOp(call, "reshape") || !(call.args().getFirst() instanceof Call inner) || !isOneOf(inner, RESHAPES)) return null;
            Expr x = inner.args().getFirst();
            List<AttrValue> newshape = new ArrayList<>();
            if (types.of(call) instanceof TensorType out && out.isStatic()) {
                for (int d : out.staticShape()) newshape.add(AttrValue.of(d));
            } else {
                List<Long> ns = longs(call.attrs(), "newshape");
                if (ns == null || ns.stream().anyMatch(v -> v == 0 || v < -1)) return null;
                for (long v : ns) newshape.add(AttrValue.of(v));
            }
            return new Call(call.callee(), List.of(x), Attrs.of("newshape", new AttrValue.ListValue(newshape)), List.of(), call.span());
        }
    }

    /** A reshape/squeeze/expand_dims whose static result type is its operand's ==> the operand. */
    record NoopReshape() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOneOf(call, RESHAPES)) return null;
            Expr x = call.args().getFirst();
            return sameStaticType(types.of(call), types.of(x)) ? x : null;
        }
    }

    /**
     * Two reshapes in a row (e.g. {@code squeeze(expand_dims(x, axis=1), axis=[1])}) whose static
     * result type is {@code x}'s ==> {@code x}: both keep the element order, so the data is x's.
     */
    record InverseReshapes() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOneOf(call, RESHAPES) || !(call.args().getFirst() instanceof Call inner) || !isOneOf(inner, RESHAPES)) return null;
            Expr x = inner.args().getFirst();
            return sameStaticType(types.of(call), types.of(x)) ? x : null;
        }
    }

    /** {@code transpose(transpose(x, p), q)} ==> {@code transpose(x, p∘q)} (or x when that is the identity). */
    record TransposeOfTranspose() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOp(call, "transpose") || !(call.args().getFirst() instanceof Call inner) || !isOp(inner, "transpose")) return null;
            Expr x = inner.args().getFirst();
            if (!(types.of(x) instanceof TensorType t)) return null;
            int[] p = perm(inner, t.rank());
            int[] q = perm(call, t.rank());
            if (p == null || q == null) return null;
            // Output dim i of the outer is dim q[i] of the inner's output, which is dim p[q[i]] of x.
            int[] r = new int[q.length];
            for (int i = 0; i < q.length; i++) r[i] = p[q[i]];
            if (isIdentity(r)) return x;
            List<AttrValue> axes = new ArrayList<>();
            for (int a : r) axes.add(AttrValue.of(a));
            return new Call(call.callee(), List.of(x), Attrs.of("axes", new AttrValue.ListValue(axes)), List.of(), call.span());
        }
    }

    /** {@code transpose(x, axes=[0, 1, ...])} ==> {@code x}. */
    record IdentityTranspose() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOp(call, "transpose") || !(types.of(call.args().getFirst()) instanceof TensorType t)) return null;
            int[] p = perm(call, t.rank());
            return p != null && isIdentity(p) ? call.args().getFirst() : null;
        }
    }

    /**
     * {@code x * 1}, {@code 1 * x}, {@code x + 0}, {@code 0 + x}, {@code x - 0}, {@code x / 1} ==>
     * {@code x}, when the constant is all ones (zeros), has no more dims than x and each of its dims is
     * 1 or x's static dim, and the result type is x's: broadcasting must not change x's shape or dtype.
     */
    record ArithmeticIdentity() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!(call.callee() instanceof Op op) || call.args().size() != 2) return null;
            Expr a = call.args().get(0);
            Expr b = call.args().get(1);
            return switch (op.name()) {
                case "multiply" -> either(pick(call, types, a, b, 1), pick(call, types, b, a, 1));
                case "add" -> either(pick(call, types, a, b, 0), pick(call, types, b, a, 0));
                case "subtract" -> pick(call, types, a, b, 0);
                case "divide" -> pick(call, types, a, b, 1);
                default -> null;
            };
        }

        private static Expr either(Expr first, Expr second) {
            return first != null ? first : second;
        }

        /** {@code x} when {@code neutral} is a constant filled with {@code value} that leaves x as it is. */
        private static Expr pick(Call call, ExprTypes types, Expr x, Expr neutral, double value) {
            if (!(neutral instanceof Constant c) || !filledWith(c.data(), value)) return null;
            if (!(types.of(x) instanceof TensorType tx) || !(types.of(call) instanceof TensorType out)) return null;
            if (!StructuralEquality.equal(tx, out) || !c.data().dtype().equals(tx.dtype()) || c.data().rank() > tx.rank()) return null;
            for (int i = 0; i < c.data().rank(); i++) {
                int d = c.data().dim(i);
                Dim xd = tx.shape().get(tx.rank() - c.data().rank() + i);
                if (d != 1 && !(xd instanceof Dim.Int(long v) && v == d)) return null;
            }
            return x;
        }

        private static boolean filledWith(NDArray a, double value) {
            for (int i = 0; i < a.size(); i++) {
                if (a.getDouble(i) != value) return false;
            }
            return true;
        }
    }

    /** {@code cast(x, dtype=d)} where x already has dtype d ==> {@code x}. */
    record CastToSameType() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOp(call, "cast")) return null;
            Expr x = call.args().getFirst();
            Type tx = types.of(x);
            return tx != null && StructuralEquality.equal(tx, types.of(call)) ? x : null;
        }
    }

    /** {@code copy(x)} ==> {@code x}: values are immutable, so a copy is the value itself. */
    record DropCopy() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            return isOp(call, "copy") ? call.args().getFirst() : null;
        }
    }

    /**
     * {@code concatenate((a, e, b), axis=k)} where {@code e} has static extent 0 along {@code k} ==>
     * {@code concatenate((a, b), axis=k)}, or {@code a} alone when it is the only non-empty operand (the
     * importer's scan accumulators start empty; ONNX's rotary embedding joins an empty pass-through part).
     * All operand types must be static; when every operand is empty, nothing changes (the result is empty).
     */
    record ConcatenateEmptyOperand() implements SimplifyPattern {
        @Override
        public Expr apply(Call call, ExprTypes types) {
            if (!isOp(call, "concatenate") || !(call.args().getFirst() instanceof dev.relayfarm.ir.Tuple tuple)) return null;
            if (!(types.of(call) instanceof TensorType out) || !out.isStatic()) return null;
            long axis = call.attrs().get("axis").orElse(AttrValue.of(0)) instanceof AttrValue.IntValue(long a) ? a : Long.MIN_VALUE;
            if (axis < -out.rank() || axis >= out.rank()) return null;
            int k = (int) (axis < 0 ? axis + out.rank() : axis);
            List<Expr> kept = new ArrayList<>();
            for (Expr f : tuple.fields()) {
                if (!(types.of(f) instanceof TensorType t) || !t.isStatic() || t.rank() != out.rank()) return null;
                if (t.staticShape()[k] != 0) kept.add(f);
            }
            if (kept.size() == tuple.fields().size() || kept.isEmpty()) return null;
            if (kept.size() == 1) return sameStaticType(types.of(kept.getFirst()), out) ? kept.getFirst() : null;
            return new Call(call.callee(), List.of(new dev.relayfarm.ir.Tuple(kept, tuple.span())), call.attrs(), call.typeArgs(), call.span());
        }
    }

    /**
     * {@code split(x, ...).i} where piece {@code i} is all of {@code x} (the other pieces are empty; its
     * static type is x's) ==> {@code x}. A projection, not a call, so {@link SimplifyExpr} tries it on
     * tuple projections.
     */
    static Expr wholeSplitPiece(dev.relayfarm.ir.TupleGetItem get, ExprTypes types) {
        if (!(get.tuple() instanceof Call split) || !isOp(split, "split")) return null;
        Expr x = split.args().getFirst();
        return sameStaticType(types.of(get), types.of(x)) ? x : null;
    }

    // ---------------------------------------------------------------- helpers

    private static boolean isOp(Call c, String name) {
        return c.callee() instanceof Op op && op.name().equals(name);
    }

    private static boolean isOneOf(Call c, Set<String> names) {
        return c.callee() instanceof Op op && names.contains(op.name());
    }

    private static boolean sameStaticType(Type a, Type b) {
        return a instanceof TensorType ta && ta.isStatic() && b instanceof TensorType tb && StructuralEquality.equal(ta, tb);
    }

    private static List<Long> longs(Attrs attrs, String key) {
        if (!(attrs.get(key).orElse(null) instanceof AttrValue.ListValue(List<AttrValue> vs))) return null;
        List<Long> out = new ArrayList<>();
        for (AttrValue v : vs) {
            if (!(v instanceof AttrValue.IntValue(long i))) return null;
            out.add(i);
        }
        return out;
    }

    /** The permutation of a transpose over rank {@code rank} (None reverses; negative axes wrap), or null. */
    private static int[] perm(Call transpose, int rank) {
        AttrValue axes = transpose.attrs().get("axes").orElse(AttrValue.NONE);
        int[] p = new int[rank];
        if (axes instanceof AttrValue.NoneValue) {
            for (int i = 0; i < rank; i++) p[i] = rank - 1 - i;
            return p;
        }
        List<Long> ls = longs(transpose.attrs(), "axes");
        if (ls == null || ls.size() != rank) return null;
        for (int i = 0; i < rank; i++) p[i] = (int) (ls.get(i) < 0 ? ls.get(i) + rank : ls.get(i));
        return p;
    }

    private static boolean isIdentity(int[] p) {
        for (int i = 0; i < p.length; i++) {
            if (p[i] != i) return false;
        }
        return true;
    }
}
