package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.UnaryOp;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Compute definitions of element-wise and broadcasting operators (Relay names), and the default
 * injective schedule. Element formulas match the interpreter's float32 kernels: sigmoid is
 * {@code 1 / (1 + exp(-x))}, relu is {@code max(x, 0)}, clip is {@code min(max(x, lo), hi)}.
 */
public final class Elementwise {
    private Elementwise() {}

    /** The element formula of a unary Relay operator, or an error naming the operator. */
    public static UnaryOperator<PrimExpr> unaryFormula(String op) {
        return switch (op) {
            case "nn.relu", "relu" -> x -> new Binary(BinaryOp.MAX, x, f(x, 0));
            case "exp" -> x -> new Call(MathFn.EXP, List.of(x));
            case "tanh" -> x -> new Call(MathFn.TANH, List.of(x));
            case "sqrt" -> x -> new Call(MathFn.SQRT, List.of(x));
            case "log" -> x -> new Call(MathFn.LOG, List.of(x));
            case "abs" -> x -> new Call(MathFn.FABS, List.of(x));
            case "negative" -> x -> new Unary(UnaryOp.NEG, x);
            case "sigmoid" -> x -> new Binary(BinaryOp.DIV, f(x, 1), new Binary(BinaryOp.ADD, f(x, 1), new Call(MathFn.EXP, List.of(new Unary(UnaryOp.NEG, x)))));
            default -> throw new IllegalArgumentException("no compute definition for unary operator '" + op + "'");
        };
    }

    private static FloatImm f(PrimExpr like, double v) {
        if (!like.dtype().isFloat()) throw new IllegalArgumentException("float operator applied to " + like.dtype());
        return new FloatImm(v, like.dtype());
    }

    public static Compute unary(String op, Tensor x) {
        UnaryOperator<PrimExpr> fn = unaryFormula(op);
        return Te.compute(op.replace('.', '_'), x.shape(), ix -> fn.apply(x.at(ix)));
    }

    public static Compute clip(Tensor x, double lo, double hi) {
        return Te.compute("clip", x.shape(), ix -> {
            PrimExpr v = x.at(ix);
            return new Binary(BinaryOp.MIN, new Binary(BinaryOp.MAX, v, f(v, lo)), f(v, hi));
        });
    }

    public static BinaryOp binaryOp(String op) {
        return switch (op) {
            case "add" -> BinaryOp.ADD;
            case "subtract" -> BinaryOp.SUB;
            case "multiply" -> BinaryOp.MUL;
            case "divide" -> BinaryOp.DIV;
            case "maximum" -> BinaryOp.MAX;
            case "minimum" -> BinaryOp.MIN;
            default -> throw new IllegalArgumentException("no compute definition for binary operator '" + op + "'");
        };
    }

    /** {@code op(a, b)} with NumPy broadcasting (shapes aligned at the right, size-1 dims stretched). */
    public static Compute binary(String op, Tensor a, Tensor b) {
        BinaryOp bop = binaryOp(op);
        List<Integer> shape = broadcastShape(op, a.shape(), b.shape());
        return Te.compute(op, shape, ix -> new Binary(bop, a.at(broadcastIndex(ix, a.shape())), b.at(broadcastIndex(ix, b.shape()))));
    }

    /** {@code nn.bias_add}: {@code out[..., c, ...] = x[..., c, ...] + bias[c]} with {@code c} at {@code axis}. */
    public static Compute biasAdd(Tensor x, Tensor bias, int axis) {
        int a = axis < 0 ? axis + x.rank() : axis;
        if (a < 0 || a >= x.rank()) throw new IllegalArgumentException("bias_add: axis must be in [" + -x.rank() + ", " + (x.rank() - 1) + "], got " + axis);
        if (bias.rank() != 1 || !bias.shape().getFirst().equals(x.shape().get(a))) {
            throw new IllegalArgumentException("bias_add: bias " + bias.shape() + " does not match axis " + axis + " of " + x.shape());
        }
        return Te.compute("bias_add", x.shape(), ix -> new Binary(BinaryOp.ADD, x.at(ix), bias.at(ix.get(a))));
    }

    static List<Integer> broadcastShape(String op, List<Integer> x, List<Integer> y) {
        int rank = Math.max(x.size(), y.size());
        List<Integer> out = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            int dx = d - (rank - x.size()), dy = d - (rank - y.size());
            int a = dx >= 0 ? x.get(dx) : 1, b = dy >= 0 ? y.get(dy) : 1;
            if (a != b && a != 1 && b != 1) throw new IllegalArgumentException(op + ": shapes " + x + " and " + y + " do not broadcast (axis " + d + ": " + a + " vs " + b + ")");
            out.add(Math.max(a, b));
        }
        return out;
    }

    static List<PrimExpr> broadcastIndex(List<Var> outIndex, List<Integer> inShape) {
        List<PrimExpr> idx = new ArrayList<>();
        int offset = outIndex.size() - inShape.size();
        for (int d = 0; d < inShape.size(); d++) idx.add(inShape.get(d) == 1 ? PrimExpr.of(0) : outIndex.get(offset + d));
        return idx;
    }

    /**
     * The default schedule of an injective stage: all axes fused into one, split by 64 elements, the
     * outer part parallel (when there is enough work to pay for threads), the inner part vectorized.
     */
    public static Schedule injectiveSchedule(Compute out) {
        List<Primitive> ps = new ArrayList<>();
        String axis = out.axes().getFirst().name();
        for (int d = 1; d < out.axes().size(); d++) {
            String next = out.axes().get(d).name();
            ps.add(new Primitive.Fuse(out.name(), axis, next));
            axis = axis + "_" + next + "_f";
        }
        long size = out.shape().stream().mapToLong(Integer::longValue).reduce(1, (p, q) -> p * q);
        if (size >= 64) {
            ps.add(new Primitive.Split(out.name(), axis, 64));
            if (size >= 16384) ps.add(new Primitive.Parallel(out.name(), axis + "_o"));
            ps.add(new Primitive.Vectorize(out.name(), axis + "_i"));
        } else {
            ps.add(new Primitive.Vectorize(out.name(), axis));
        }
        return new Schedule(ps);
    }
}
