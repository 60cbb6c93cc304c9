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
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Folds a constant per-channel scale around {@code nn.conv2d} (NCHW data, OIHW weight) or
 * {@code nn.dense} into the weight, as TVM's FoldScaleAxis does:
 *
 * <ul>
 *   <li>backward: a scale applied to the output channels, possibly after per-channel constant
 *       biases ({@code nn.bias_add}, {@code add}/{@code subtract} with a constant), moves into the
 *       weight's output axis and scales the biases too;
 *   <li>forward: a scale applied to the input channels moves into the weight's input axis, also
 *       through {@code nn.relu} when every scale value is positive ({@code relu(s * x) = s * relu(x)}
 *       only holds for {@code s > 0}).
 * </ul>
 *
 * <pre>
 * multiply(nn.conv2d(%x, %w), S)             // S: constant [C_out, 1, 1]
 *   ==>  nn.conv2d(%x, multiply(%w, S'))      // S': S as [C_out, 1, 1, 1]
 * nn.conv2d(nn.relu(multiply(%x, S)), %w)    // S: positive constant [C_in, 1, 1]
 *   ==>  nn.conv2d(nn.relu(%x), multiply(%w, S))
 * </pre>
 *
 * The weight (and bias) multiply is left as an expression over constants for fold-constant to
 * finish. Not done: a scale that is not a constant or not per-channel; a conv/dense output (or an
 * intermediate bias or relu) that has other consumers, since folding would then need a second copy
 * of the computation; chains through let-bound variables (the pass works on dataflow); other
 * layouts, grouped convolutions in the forward direction, and TVM's forward folding through
 * {@code add} (which divides the bias by the scale).
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

        Folder(Options options, Map<Expr, Integer> uses, InferResult types) {
            this.options = options;
            this.uses = uses;
            this.types = types;
        }

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
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

        private Expr backward(Expr data, Constant scale, TensorType out) {
            // Dropping the multiply must not change the type (a scale may broadcast its operand up).
            if (out == null || !out.dtype().isFloat() || !out.equals(tensorType(data))) return null;
            // Walk down the per-channel bias ops to the producer; every step must have this one consumer.
            List<Call> chain = new ArrayList<>();
            Expr cur = data;
            while (true) {
                if (uses(cur) != 1 || !(cur instanceof Call c) || !(c.callee() instanceof Op op)) return null;
                if (op.name().equals("nn.conv2d") || op.name().equals("nn.dense")) break;
                if (op.name().equals("nn.bias_add") && c.args().get(1) instanceof Constant) {
                    chain.add(c);
                    cur = c.args().get(0);
                } else if ((op.name().equals("add") || op.name().equals("subtract")) && constantSide(c) >= 0) {
                    chain.add(c);
                    cur = c.args().get(1 - constantSide(c));
                } else {
                    return null;
                }
            }
            Call producer = (Call) cur;
            int rank = out.rank();
            int axis = channelAxis(producer, rank);
            if (axis < 0 || !(out.shape().get(axis) instanceof Dim.Int(long n))) return null;
            int channels = (int) n;
            double[] s = perChannel(scale.data(), rank, axis, channels);
            if (s == null) return null;
            for (Call c : chain) {
                if (c.callee() instanceof Op op && op.name().equals("nn.bias_add")) {
                    long biasAxis = intAttr(c, "axis", 1);
                    if (biasAxis < 0) biasAxis += rank;
                    if (biasAxis != axis) return null;
                } else if (perChannel(((Constant) c.args().get(constantSide(c))).data(), rank, axis, channels) == null) {
                    return null;
                }
            }
            boolean conv = isOp(producer, "nn.conv2d");
            int[] weightShape = conv ? new int[] {channels, 1, 1, 1} : new int[] {channels, 1};
            Expr weight = Call.op("multiply", producer.args().get(1), constant(scale.data(), weightShape, s));
            Expr rebuilt = new Call(producer.callee(), List.of(producer.args().get(0), weight), producer.attrs(),
                    producer.typeArgs(), producer.span());
            for (int i = chain.size() - 1; i >= 0; i--) {
                Call c = chain.get(i);
                List<Expr> args = new ArrayList<>(c.args());
                if (isOp(c, "nn.bias_add")) {
                    args.set(0, rebuilt);
                    args.set(1, Call.op("multiply", c.args().get(1), constant(scale.data(), new int[] {channels}, s)));
                } else {
                    int k = constantSide(c);
                    args.set(1 - k, rebuilt);
                    args.set(k, Call.op("multiply", c.args().get(k), scale));
                }
                rebuilt = new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span());
            }
            return rebuilt;
        }

        // ------------------------------------------------------------ forward

        /** {@code conv2d(multiply(x, S), w)}, optionally through relu: S moves into the weight's input axis. */
        private Expr forward(Call producer) {
            Expr data = producer.args().get(0);
            TensorType in = tensorType(data);
            if (in == null || !in.dtype().isFloat()) return null;
            int rank = in.rank();
            int axis = isOp(producer, "nn.conv2d") ? (channelAxis(producer, rank) >= 0 && groups(producer) == 1 ? 1 : -1) : rank - 1;
            if (axis < 0 || !(in.shape().get(axis) instanceof Dim.Int(long n))) return null;
            Call relu = null;
            Expr cur = data;
            if (isOp(cur, "nn.relu") && uses(cur) == 1) {
                relu = (Call) cur;
                cur = relu.args().get(0);
            }
            if (!isOp(cur, "multiply") || uses(cur) != 1) return null;
            Call mul = (Call) cur;
            for (int side = 0; side < 2; side++) {
                if (!(mul.args().get(1 - side) instanceof Constant scale)) continue;
                Expr x = mul.args().get(side);
                // Dropping the scale must not change the data's shape (a scale may broadcast x up).
                if (!in.equals(tensorType(x))) continue;
                double[] s = perChannel(scale.data(), rank, axis, (int) n);
                if (s == null) continue;
                if (relu != null && !allPositive(s)) continue;
                Expr newData = relu == null ? x : new Call(relu.callee(), List.of(x), relu.attrs(), relu.typeArgs(), relu.span());
                // The weight's input axis: I of OIHW (broadcast as [C, 1, 1]) or K of dense's [units, K].
                int[] shape = isOp(producer, "nn.conv2d") ? new int[] {(int) n, 1, 1} : new int[] {(int) n};
                Expr weight = Call.op("multiply", producer.args().get(1), constant(scale.data(), shape, s));
                return new Call(producer.callee(), List.of(newData, weight), producer.attrs(), producer.typeArgs(), producer.span());
            }
            return null;
        }

        // ------------------------------------------------------------ helpers

        private int uses(Expr post) {
            Integer n = uses.get(origin.getOrDefault(post, post));
            // A node built by an earlier fold and not standing for an original one has its one parent.
            return n == null ? 1 : n;
        }

        private TensorType tensorType(Expr post) {
            Expr pre = origin.getOrDefault(post, post);
            Type t = types.types().get(pre);
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

    /** Which argument of a binary call is a constant (0 or 1), or -1. */
    private static int constantSide(Call c) {
        if (c.args().size() != 2) return -1;
        if (c.args().get(1) instanceof Constant) return 1;
        return c.args().get(0) instanceof Constant ? 0 : -1;
    }

    /**
     * The value per channel of a tensor that broadcasts against a rank-{@code rank} value along
     * {@code axis} only (all its other dimensions are 1, e.g. [C, 1, 1] or [1, C, 1, 1] for NCHW, or
     * a scalar), or null.
     */
    static double[] perChannel(NDArray a, int rank, int axis, int channels) {
        if (!a.dtype().isFloat() || a.rank() > rank) return null;
        for (int i = 0; i < a.rank(); i++) {
            if (rank - a.rank() + i != axis && a.dim(i) != 1) return null;
        }
        int n = a.size();
        if (n != 1 && n != channels) return null;
        double[] out = new double[channels];
        for (int c = 0; c < channels; c++) out[c] = a.getDouble(n == 1 ? 0 : c);
        return out;
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
