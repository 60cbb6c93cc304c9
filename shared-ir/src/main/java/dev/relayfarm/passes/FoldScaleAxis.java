package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Folds a constant per-channel scale around {@code nn.conv2d} (NCHW data, OIHW weight) or
 * {@code nn.dense} into the weight, as TVM's FoldScaleAxis does:
 *
 * <ul>
 *   <li>backward: a scale applied to the output channels moves into the weight's output axis, also
 *       through per-channel constant biases ({@code nn.bias_add}, {@code add}/{@code subtract} with
 *       a constant; the bias is scaled too) and through the sum of two such branches
 *       ({@code (conv1 + conv2) * s}, both weights scaled);
 *   <li>forward: a scale applied to the input channels moves into the weight's input axis, also
 *       through per-channel constant biases (which become {@code b / s}, so the scale must be
 *       non-zero) and through {@code nn.relu} when every scale value is positive
 *       ({@code relu(s * x) = s * relu(x)} only holds for {@code s > 0}).
 * </ul>
 *
 * <pre>
 * multiply(nn.conv2d(%x, %w), S)             // S: constant [C_out, 1, 1]
 *   ==>  nn.conv2d(%x, multiply(%w, S'))      // S': S as [C_out, 1, 1, 1]
 * nn.conv2d(nn.relu(multiply(%x, S)), %w)    // S: positive constant [C_in, 1, 1]
 *   ==>  nn.conv2d(nn.relu(%x), multiply(%w, S))
 * </pre>
 *
 * The weight (and bias) arithmetic is left as expressions over constants for fold-constant to
 * finish. Not done: a scale that is not a constant or not per-channel (scalars count as
 * per-channel); a conv/dense output, bias or relu on the way that has other consumers, since
 * folding would then need a second copy of the computation; backward folding through relu (TVM
 * does not either); chains through let-bound variables (the pass works on dataflow); layouts other
 * than NCHW/OIHW, and grouped convolutions in the forward direction; the bodies of fused
 * ({@code Primitive}) functions.
 */
public final class FoldScaleAxis extends FunctionPass {
    /** Which directions run; TVM exposes them as two passes, both on by default. */
    public record Options(boolean forward, boolean backward) {
        public static final Options DEFAULT = new Options(true, true);
    }

    private static final PassInfo INFO = new PassInfo("fold-scale-axis", 3,
            "folds constant per-channel scales around conv2d/dense into their weights");

    private final Options options;

    public FoldScaleAxis() {
        this(Options.DEFAULT);
    }

    public FoldScaleAxis(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        return function.withBody(new Folder(options, useCounts(function), context.types()).rewrite(function.body()));
    }

    /** How many parent references each node of {@code function} has (a shared node counts once per parent). */
    private static Map<Expr, Integer> useCounts(Function function) {
        Map<Expr, Integer> uses = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(function)) {
            for (Expr child : e.children()) uses.merge(child, 1, Integer::sum);
        }
        return uses;
    }

    /** One run's rewriter: post-order, so the chains it inspects are already rewritten. */
    private static final class Folder extends ExprRewriter {
        private final Options options;
        private final Map<Expr, Integer> uses;
        private final InferResult types;
        /** Rewritten node -> the original node it stands for (for use counts and types). */
        private final Map<Expr, Expr> origin = new IdentityHashMap<>();
        /** Types of the nodes a fold built inside its result (a later fold may walk through them). */
        private final Map<Expr, Type> built = new IdentityHashMap<>();

        Folder(Options options, Map<Expr, Integer> uses, InferResult types) {
            this.options = options;
            this.uses = uses;
            this.types = types;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            // A fused kernel (Primitive function) is already lowered: its body is left as it is.
            if (pre instanceof Function f && f.isPrimitive()) return pre;
            // Registered first: the fold below asks for this node's type and use count.
            if (post != pre) origin.put(post, pre);
            Expr out = post;
            if (post instanceof Call c && c.callee() instanceof Op op) {
                Expr folded = switch (op.name()) {
                    case "multiply" -> options.backward() ? backward(c) : null;
                    case "nn.conv2d", "nn.dense" -> options.forward() ? forward(c) : null;
                    default -> null;
                };
                if (folded != null) out = folded;
            }
            if (out != pre) origin.put(out, pre);
            return out;
        }

        // ------------------------------------------------------------ backward

        /** {@code multiply(chain, S)} with the chain ending at conv2d/dense: S moves into the weight. */
        private Expr backward(Call mul) {
            for (int side = 0; side < 2; side++) {
                if (!(mul.args().get(1 - side) instanceof Constant scale)) continue;
                Expr folded = backward(mul.args().get(side), scale, tensorType(mul));
                if (folded != null) return folded;
            }
            return null;
        }

        /**
         * The scaled tree under {@code multiply(data, scale)}: conv2d/dense producers at the leaves,
         * above them bias_add / add / subtract with a per-channel constant, or add / subtract of two
         * scaled trees ({@code (conv1 + conv2) * s = conv1' + conv2'}). Every node must have exactly
         * one consumer and the multiply's type. Null when the tree does not have that shape.
         */
        private Expr backward(Expr data, Constant scale, TensorType out) {
            if (out == null || !out.dtype().isFloat()) return null;
            int rank = out.rank();
            List<Call> nodes = new ArrayList<>(); // parents before children
            ArrayDeque<Expr> work = new ArrayDeque<>();
            work.push(data);
            int axis = -1;
            while (!work.isEmpty()) {
                Expr cur = work.pop();
                // Same type all the way down: dropping the multiply must not change any shape.
                if (uses(cur) != 1 || !out.equals(tensorType(cur)) || !(cur instanceof Call c) || !(c.callee() instanceof Op op)) return null;
                nodes.add(c);
                switch (op.name()) {
                    case "nn.conv2d", "nn.dense" -> {
                        int a = channelAxis(c, rank);
                        if (a < 0 || axis >= 0 && a != axis) return null;
                        // the scale is multiplied into the weight: only where the weight has the scale's dtype
                        if (!sameDType(c.args().get(1), out)) return null;
                        axis = a;
                    }
                    case "nn.bias_add" -> {
                        if (!isConstantExpr(c.args().get(1))) return null;
                        work.push(c.args().get(0));
                    }
                    case "add", "subtract" -> {
                        int k = constantSide(c);
                        if (k >= 0) {
                            work.push(c.args().get(1 - k));
                        } else {
                            work.push(c.args().get(0));
                            work.push(c.args().get(1));
                        }
                    }
                    default -> {
                        return null;
                    }
                }
            }
            if (axis < 0 || !(out.shape().get(axis) instanceof Dim.Int(long n))) return null;
            int channels = (int) n;
            double[] s = perChannel(scale.data(), rank, axis, channels);
            if (s == null) return null;
            for (Call c : nodes) {
                if (isOp(c, "nn.bias_add")) {
                    long biasAxis = intAttr(c, "axis", 1);
                    if (biasAxis < 0) biasAxis += rank;
                    if (biasAxis != axis) return null;
                } else if ((isOp(c, "add") || isOp(c, "subtract")) && constantSide(c) >= 0
                        && !perChannelOperand(c.args().get(constantSide(c)), rank, axis, channels)) {
                    return null;
                }
            }
            Map<Expr, Expr> scaled = new IdentityHashMap<>();
            for (int i = nodes.size() - 1; i >= 0; i--) {
                Call c = nodes.get(i);
                List<Expr> args = new ArrayList<>(c.args());
                if (isOp(c, "nn.conv2d") || isOp(c, "nn.dense")) {
                    int[] shape = isOp(c, "nn.conv2d") ? new int[] {channels, 1, 1, 1} : new int[] {channels, 1};
                    args.set(1, Call.op("multiply", c.args().get(1), constant(scale.data(), shape, s)));
                } else if (isOp(c, "nn.bias_add")) {
                    args.set(0, scaled.get(c.args().get(0)));
                    args.set(1, constOp("multiply", c.args().get(1), constant(scale.data(), new int[] {channels}, s)));
                } else {
                    int k = constantSide(c);
                    for (int j = 0; j < 2; j++) args.set(j, j == k ? constOp("multiply", c.args().get(j), scale) : scaled.get(c.args().get(j)));
                }
                Call rebuilt = new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span());
                built.put(rebuilt, out);
                scaled.put(c, rebuilt);
            }
            return scaled.get(data);
        }

        // ------------------------------------------------------------ forward

        /**
         * {@code conv2d(chain(multiply(x, S)), w)} where the chain is relu and add / subtract with a
         * per-channel constant B: S moves into the weight's input axis and each B becomes B / S
         * ({@code x * s + b = (x + b / s) * s}), which needs S non-zero; relu needs S positive.
         */
        private Expr forward(Call producer) {
            Expr data = producer.args().get(0);
            TensorType in = tensorType(data);
            if (in == null || !in.dtype().isFloat() || !sameDType(producer.args().get(1), in)) return null;
            int rank = in.rank();
            int axis = isOp(producer, "nn.conv2d") ? (channelAxis(producer, rank) >= 0 && groups(producer) == 1 ? 1 : -1) : rank - 1;
            if (axis < 0 || !(in.shape().get(axis) instanceof Dim.Int(long n))) return null;
            int channels = (int) n;
            List<Call> chain = new ArrayList<>(); // from the conv's input down to the multiply
            Expr cur = data;
            while (uses(cur) == 1 && in.equals(tensorType(cur)) && (isOp(cur, "nn.relu")
                    || (isOp(cur, "add") || isOp(cur, "subtract")) && constantSide((Call) cur) >= 0
                    && perChannelOperand(((Call) cur).args().get(constantSide((Call) cur)), rank, axis, channels))) {
                Call c = (Call) cur;
                chain.add(c);
                cur = isOp(c, "nn.relu") ? c.args().get(0) : c.args().get(1 - constantSide(c));
            }
            if (!isOp(cur, "multiply") || uses(cur) != 1) return null;
            Call mul = (Call) cur;
            boolean relu = chain.stream().anyMatch(c -> isOp(c, "nn.relu"));
            boolean bias = chain.stream().anyMatch(c -> !isOp(c, "nn.relu"));
            for (int side = 0; side < 2; side++) {
                if (!(mul.args().get(1 - side) instanceof Constant scale)) continue;
                Expr x = mul.args().get(side);
                // Dropping the scale must not change the data's shape (a scale may broadcast x up).
                if (!in.equals(tensorType(x))) continue;
                double[] s = perChannel(scale.data(), rank, axis, channels);
                if (s == null || relu && !allPositive(s) || bias && !allNonZero(s)) continue;
                Expr rebuilt = x;
                for (int i = chain.size() - 1; i >= 0; i--) {
                    Call c = chain.get(i);
                    List<Expr> args = new ArrayList<>(c.args());
                    if (isOp(c, "nn.relu")) {
                        args.set(0, rebuilt);
                    } else {
                        int k = constantSide(c);
                        args.set(1 - k, rebuilt);
                        args.set(k, constOp("divide", c.args().get(k), scale));
                    }
                    rebuilt = new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span());
                    built.put(rebuilt, in);
                }
                // The weight's input axis: I of OIHW (broadcast as [C, 1, 1]) or K of dense's [units, K].
                int[] shape = isOp(producer, "nn.conv2d") ? new int[] {channels, 1, 1} : new int[] {channels};
                Expr weight = Call.op("multiply", producer.args().get(1), constant(scale.data(), shape, s));
                return new Call(producer.callee(), List.of(rebuilt, weight), producer.attrs(), producer.typeArgs(), producer.span());
            }
            return null;
        }

        // ------------------------------------------------------------ helpers

        /**
         * Whether {@code weight} has {@code like}'s dtype (a mixed-dtype conv/dense keeps its scale outside). A weight
         * without a known type is one this pass already scaled (multiply(W, S), built here from a weight that passed).
         */
        private boolean sameDType(Expr weight, TensorType like) {
            TensorType w = tensorType(weight);
            return w == null || w.dtype().equals(like.dtype());
        }

        /** Which argument of a binary call is a constant or an expression over constants (0 or 1), or -1. */
        private int constantSide(Call c) {
            if (c.args().size() != 2) return -1;
            if (isConstantExpr(c.args().get(1))) return 1;
            return isConstantExpr(c.args().get(0)) ? 0 : -1;
        }

        /** A float tensor whose shape broadcasts along {@code axis} only (see {@link #perChannel}). */
        private boolean perChannelOperand(Expr e, int rank, int axis, int channels) {
            TensorType t = e instanceof Constant c ? c.type() : tensorType(e);
            return t != null && t.dtype().isFloat() && t.isStatic() && perChannelShape(t.staticShape(), rank, axis, channels);
        }

        /** {@code op(a, b)} over constant expressions, typed so a later fold can look at it (e.g. a bias scaled twice). */
        private Expr constOp(String op, Expr a, Expr b) {
            Call c = Call.op(op, a, b);
            TensorType ta = a instanceof Constant k ? k.type() : tensorType(a);
            TensorType tb = b instanceof Constant k ? k.type() : tensorType(b);
            if (ta != null && tb != null) OpRegistry.get(op).inferOutput(List.of(ta, tb), c.attrs()).ifPresent(t -> built.put(c, t));
            return c;
        }

        private int uses(Expr post) {
            Integer n = uses.get(origin.getOrDefault(post, post));
            // A node built by an earlier fold and not standing for an original one has its one parent.
            return n == null ? 1 : n;
        }

        private TensorType tensorType(Expr post) {
            Type t = built.get(post);
            if (t == null) t = types.types().get(origin.getOrDefault(post, post));
            return t instanceof TensorType tt ? tt : null;
        }
    }

    /** 1 for conv2d in NCHW/OIHW, the last axis for dense, -1 for anything else (other layouts). */
    private static int channelAxis(Call producer, int rank) {
        if (isOp(producer, "nn.dense")) return rank - 1;
        String data = stringAttr(producer, "data_layout", "NCHW");
        String kernel = stringAttr(producer, "kernel_layout", "OIHW");
        String out = stringAttr(producer, "out_layout", "");
        return rank == 4 && data.equals("NCHW") && kernel.equals("OIHW") && (out.isEmpty() || out.equals("NCHW")) ? 1 : -1;
    }

    private static long groups(Call conv) {
        return intAttr(conv, "groups", 1);
    }

    /** An integer attribute, {@code dflt} when absent, {@code Long.MIN_VALUE} (matching nothing) when not an integer. */
    private static long intAttr(Call c, String key, long dflt) {
        AttrValue v = c.attrs().get(key).orElse(null);
        if (v == null) return dflt;
        return v instanceof AttrValue.IntValue(long i) ? i : Long.MIN_VALUE;
    }

    private static String stringAttr(Call c, String key, String dflt) {
        return c.attrs().get(key).map(v -> v instanceof AttrValue.StringValue(String s) ? s : "?").orElse(dflt);
    }

    /**
     * The value per channel of a tensor that broadcasts against a rank-{@code rank} value along
     * {@code axis} only (all its other dimensions are 1, e.g. [C, 1, 1] or [1, C, 1, 1] for NCHW, or
     * a scalar), or null.
     */
    static double[] perChannel(NDArray a, int rank, int axis, int channels) {
        if (!a.dtype().isFloat() || !perChannelShape(a.shape(), rank, axis, channels)) return null;
        int n = a.size();
        double[] out = new double[channels];
        for (int c = 0; c < channels; c++) out[c] = a.getDouble(n == 1 ? 0 : c);
        return out;
    }

    private static boolean perChannelShape(int[] shape, int rank, int axis, int channels) {
        if (shape.length > rank) return false;
        for (int i = 0; i < shape.length; i++) {
            int d = rank - shape.length + i;
            if (d == axis ? shape[i] != 1 && shape[i] != channels : shape[i] != 1) return false;
        }
        return true;
    }

    /**
     * A constant, or a small operator expression over constants (what an earlier fold leaves for
     * fold-constant); walked with a bound so a huge constant expression is simply not recognized.
     */
    private static boolean isConstantExpr(Expr root) {
        ArrayDeque<Expr> work = new ArrayDeque<>(List.of(root));
        for (int seen = 0; !work.isEmpty(); seen++) {
            if (seen > 64) return false;
            switch (work.pop()) {
                case Constant c -> {}
                case Call c when c.callee() instanceof Op -> work.addAll(c.args());
                default -> {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean allNonZero(double[] s) {
        for (double v : s) {
            if (v == 0 || !Double.isFinite(v)) return false;
        }
        return true;
    }

    private static boolean allPositive(double[] s) {
        for (double v : s) {
            if (!(v > 0)) return false;
        }
        return true;
    }

    private static Constant constant(NDArray like, int[] shape, double[] values) {
        return new Constant(NDArray.fromDoubles(like.dtype(), shape, values));
    }

    private static boolean isOp(Expr e, String name) {
        return e instanceof Call c && c.callee() instanceof Op op && op.name().equals(name);
    }
}
