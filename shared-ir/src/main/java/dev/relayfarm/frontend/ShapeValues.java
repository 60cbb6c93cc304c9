package dev.relayfarm.frontend;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Shape values: the small integer vectors a model computes from {@code Shape} of its tensors, evaluated at import time
 * element by element, where an element is either a known integer or a dim of some tensor that is known only at run
 * time ({@code ?}). Constant folding cannot see through {@code shape_of(x)} once {@code x} has a {@code ?} dim, but
 * most of such a vector is still known: PaddleOCR's recognizer reshapes with
 * {@code Concat(Slice(Shape(u), 0, 2), [-1])}, which for {@code u : [1, 120, ?]} is {@code [1, 120, -1]}.
 *
 * <p>What is evaluated, over the Relay the converters built (so each ONNX spelling of the same thing is handled
 * once): constants, {@code shape_of}, {@code cast} between numeric types, the movement operators
 * {@code strided_slice, concatenate, take, expand_dims, squeeze, reshape} (run with their own kernels on the
 * positions of the elements, so where each result element comes from is exactly what the operator does), and
 * {@code add, subtract, multiply, divide, floor_divide, maximum, minimum} (computed by their kernels when every
 * element is known; with a {@code ?} only {@code x*1, x+0, x-0, x/1} keep the dim, anything else is an unknown
 * {@code ?}). Everything else (a graph input, a data-dependent value) is not a shape value.
 *
 * <p>Not done: symbolic arithmetic ({@code ? * 2} is just {@code ?}, not a size expression); equalities between
 * {@code ?} dims of different tensors (types do not record them), so a {@code ?} element equals a tensor's dim only
 * when it was read off that very tensor at that axis.
 *
 * <p>The walk is iterative and memoized by identity, like {@link ForwardTyper}: a shape computation can be as long as
 * the graph.
 */
final class ShapeValues {
    /** The longest vector treated as a shape value; longer integer tensors are data, not shapes. */
    static final int MAX_ELEMENTS = 64;

    private static final Set<String> MOVEMENT = Set.of("strided_slice", "concatenate", "take", "expand_dims", "squeeze", "reshape");
    private static final Set<String> ARITHMETIC = Set.of("add", "subtract", "multiply", "divide", "floor_divide", "maximum", "minimum");

    /**
     * One element of a shape value: {@code dim} is its size when known ({@link Dim.Int}), else {@code ?}; {@code of}
     * and {@code axis} say which tensor's dim it is, when it was read off a tensor's type unchanged (null otherwise).
     */
    record Elem(Dim dim, Expr of, int axis) {
        static final Elem UNKNOWN = new Elem(Dim.ANY, null, -1);

        static Elem known(long v) {
            return new Elem(Dim.of(v), null, -1);
        }

        boolean isKnown() {
            return dim.isStatic();
        }

        /** Whether this element is certainly dim {@code axis} of {@code tensor}, whose type is {@code type}. */
        boolean isDimOf(Expr tensor, TensorType type, int axis) {
            if (axis >= type.rank()) return false;
            Dim d = type.shape().get(axis);
            if (of == tensor && this.axis == axis) return true;
            return !(d instanceof Dim.Any) && d.equals(dim); // a known size, or the same named size
        }

        @Override
        public String toString() {
            return dim.toString();
        }
    }

    /** A shape value: a scalar or a vector of {@link Elem}s, of {@code dtype} (an integer or float type). */
    record Value(DType dtype, boolean scalar, List<Elem> elems) {
        boolean fullyKnown() {
            return elems.stream().allMatch(Elem::isKnown);
        }

        /** The value as a tensor; only when {@link #fullyKnown()}. */
        NDArray toArray() {
            long[] v = elems.stream().mapToLong(e -> e.dim().value()).toArray();
            int[] shape = scalar ? new int[0] : new int[] {v.length};
            if (dtype.isFloat()) return NDArray.fromDoubles(dtype, shape, java.util.Arrays.stream(v).asDoubleStream().toArray());
            return NDArray.fromLongs(dtype, shape, v);
        }

        /** {@code [1, 120, ?]}, for messages. */
        @Override
        public String toString() {
            return scalar ? elems.getFirst().toString() : elems.toString();
        }
    }

    /** Marks an expression that is not a shape value (the memo cannot hold null). */
    private static final Value NONE = new Value(DType.INT64, true, List.of());

    private final Function<Expr, Type> typeOf;
    private final Map<Expr, Value> memo = new IdentityHashMap<>();

    ShapeValues(Function<Expr, Type> typeOf) {
        this.typeOf = typeOf;
    }

    /** The shape value {@code e} computes, or empty when it is not one. */
    Optional<Value> of(Expr e) {
        ArrayDeque<Expr> stack = new ArrayDeque<>();
        stack.push(e);
        while (!stack.isEmpty()) {
            Expr top = stack.peek();
            if (memo.containsKey(top)) {
                stack.pop();
                continue;
            }
            List<Expr> operands = operands(top);
            if (operands == null) {
                stack.pop();
                memo.put(top, eligible(top) == null ? NONE : leaf(top));
                continue;
            }
            List<Expr> pending = operands.stream().filter(o -> !memo.containsKey(o)).toList();
            if (!pending.isEmpty()) {
                pending.forEach(stack::push);
                continue;
            }
            stack.pop();
            List<Value> values = operands.stream().map(memo::get).toList();
            memo.put(top, values.stream().anyMatch(v -> v == NONE) ? NONE : evaluate((Call) top, values));
        }
        Value v = memo.get(e);
        return v == NONE ? Optional.empty() : Optional.of(v);
    }

    /**
     * The operands whose values {@code e} needs, or null when {@code e} is a leaf (a constant, {@code shape_of}) or
     * not something this class evaluates (then it is a leaf that is {@link #NONE}).
     */
    private List<Expr> operands(Expr e) {
        if (!(e instanceof Call c) || !(c.callee() instanceof Op op) || eligible(e) == null) return null;
        String name = op.name();
        if (!MOVEMENT.contains(name) && !ARITHMETIC.contains(name) && !name.equals("cast")) return null;
        List<Expr> out = new ArrayList<>();
        for (Expr a : c.args()) {
            if (a instanceof Tuple t) out.addAll(t.fields()); // concatenate's operand
            else out.add(a);
        }
        return out;
    }

    /** The type of {@code e} when it can be a shape value: a small numeric scalar or vector; else null. */
    private TensorType eligible(Expr e) {
        if (e instanceof Tuple) return null;
        if (!(typeOf.apply(e) instanceof TensorType t) || t.rank() > 1 || !t.isStatic()) return null;
        // sizes are exact in 16-bit and wider integers and in float32/64, not in float16 (above 2048) or narrower types
        DType d = t.dtype();
        if (d.lanes() != 1 || !(d.isInteger() && d.bits() >= 16 || d.isFloat() && !d.isMiniFloat() && d.bits() >= 32)) return null;
        if (t.rank() == 1 && t.staticShape()[0] > MAX_ELEMENTS) return null;
        return t;
    }

    private Value leaf(Expr e) {
        TensorType t = eligible(e);
        if (e instanceof Constant k) {
            NDArray a = k.data();
            List<Elem> elems = new ArrayList<>();
            for (int i = 0; i < a.elementCount(); i++) {
                double d = a.getDouble(i);
                if (t.dtype().isFloat() && (d != Math.rint(d) || Math.abs(d) > 1L << 53)) return NONE; // a fraction is not a size
                elems.add(Elem.known(t.dtype().isFloat() ? (long) d : a.getLong(i)));
            }
            return new Value(t.dtype(), t.rank() == 0, elems);
        }
        if (e instanceof Call c && c.callee() instanceof Op op && op.name().equals("shape_of") && typeOf.apply(c.args().getFirst()) instanceof TensorType x) {
            List<Elem> elems = new ArrayList<>();
            for (int i = 0; i < x.rank(); i++) {
                Dim d = x.shape().get(i);
                elems.add(d.isStatic() ? Elem.known(d.value()) : new Elem(d, c.args().getFirst(), i));
            }
            return new Value(t.dtype(), false, elems);
        }
        return NONE;
    }

    private Value evaluate(Call c, List<Value> in) {
        TensorType t = eligible(c);
        String name = ((Op) c.callee()).name();
        try {
            // known elements are integers (a fraction is NONE), a dim read off a tensor is one too, and an unknown stays
            // unknown: a cast between numeric types changes none of them
            if (name.equals("cast")) return new Value(t.dtype(), t.rank() == 0, in.getFirst().elems());
            if (MOVEMENT.contains(name)) return moved(c, t, name, in);
            return arithmetic(c, t, name, in);
        } catch (RuntimeException ex) {
            // the kernel refused these values (an index out of range, a division by zero): the node's converter or its
            // run-time check reports that, not the shape evaluation
            return NONE;
        }
    }

    /**
     * A movement operator: its kernel runs on the positions of the data elements (all data operands numbered in one
     * sequence), and each result position takes the element whose number lands there. {@code take}'s indices are
     * data of the operator, not moved: they must be known.
     */
    private Value moved(Call c, TensorType t, String name, List<Value> in) {
        // only concatenate moves several operands and take reads indices; any other operand (a dynamic begin of
        // strided_slice, say) is not data to number
        if (!name.equals("concatenate") && in.size() != (name.equals("take") ? 2 : 1)) return NONE;
        List<Elem> table = new ArrayList<>();
        List<NDArray> args = new ArrayList<>();
        for (int k = 0; k < in.size(); k++) {
            Value v = in.get(k);
            int[] shape = v.scalar() ? new int[0] : new int[] {v.elems().size()};
            if (name.equals("take") && k == 1) {
                if (!v.fullyKnown()) return NONE;
                args.add(v.toArray());
                continue;
            }
            long[] positions = new long[v.elems().size()];
            for (int i = 0; i < positions.length; i++) positions[i] = table.size() + i;
            table.addAll(v.elems());
            args.add(NDArray.fromLongs(DType.INT64, shape, positions));
        }
        NDArray where = OpRegistry.get(name).compute(args, c.attrs()).getFirst();
        List<Elem> out = new ArrayList<>();
        for (int i = 0; i < where.elementCount(); i++) out.add(table.get((int) where.getLong(i)));
        return new Value(t.dtype(), t.rank() == 0, out);
    }

    /** Elementwise arithmetic with numpy broadcasting between scalars and vectors. */
    private Value arithmetic(Call c, TensorType t, String name, List<Value> in) {
        Value a = in.get(0), b = in.get(1);
        if (a.fullyKnown() && b.fullyKnown()) {
            NDArray r = OpRegistry.get(name).compute(List.of(a.toArray(), b.toArray()), c.attrs()).getFirst();
            List<Elem> out = new ArrayList<>();
            for (int i = 0; i < r.elementCount(); i++) {
                double d = r.getDouble(i);
                if (t.dtype().isFloat() && d != Math.rint(d)) return NONE;
                out.add(Elem.known(t.dtype().isFloat() ? (long) d : r.getLong(i)));
            }
            return new Value(t.dtype(), t.rank() == 0, out);
        }
        int n = t.rank() == 0 ? 1 : t.staticShape()[0];
        List<Elem> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Elem x = a.elems().get(a.elems().size() == 1 ? 0 : i);
            Elem y = b.elems().get(b.elems().size() == 1 ? 0 : i);
            out.add(partial(name, x, y));
        }
        return new Value(t.dtype(), t.rank() == 0, out);
    }

    /** One element of arithmetic where an operand is {@code ?}: identities keep the dim, anything else is unknown. */
    private static Elem partial(String op, Elem x, Elem y) {
        boolean yIs0 = y.isKnown() && y.dim().value() == 0, yIs1 = y.isKnown() && y.dim().value() == 1;
        boolean xIs0 = x.isKnown() && x.dim().value() == 0, xIs1 = x.isKnown() && x.dim().value() == 1;
        return switch (op) {
            case "add" -> yIs0 ? x : xIs0 ? y : Elem.UNKNOWN;
            case "subtract" -> yIs0 ? x : Elem.UNKNOWN;
            case "multiply" -> yIs1 ? x : xIs1 ? y : yIs0 || xIs0 ? Elem.known(0) : Elem.UNKNOWN;
            case "divide", "floor_divide" -> yIs1 ? x : Elem.UNKNOWN;
            default -> Elem.UNKNOWN;
        };
    }

    /**
     * Reshape's target from a shape value, in ONNX's (and Relay's) spelling: known elements as they are ({@code 0}
     * copies, {@code -1} infers, unless {@code allowzero}), an element that is certainly the input's dim at the same
     * position becomes {@code 0} (copy; not under {@code allowzero}, where 0 is a size), and one remaining unknown
     * becomes {@code -1}. Empty when more than one element stays unknown (a reshape can infer only one).
     */
    static Optional<long[]> reshapeTarget(Value shape, Expr data, TensorType dataType, boolean allowzero) {
        long[] out = new long[shape.elems().size()];
        boolean inferred = shape.elems().stream().anyMatch(e -> e.isKnown() && e.dim().value() == -1);
        for (int i = 0; i < out.length; i++) {
            Elem e = shape.elems().get(i);
            if (e.isKnown()) {
                out[i] = e.dim().value();
            } else if (!allowzero && e.isDimOf(data, dataType, i)) {
                out[i] = 0;
            } else if (!inferred) {
                out[i] = -1;
                inferred = true;
            } else {
                return Optional.empty();
            }
        }
        return Optional.of(out);
    }
}
