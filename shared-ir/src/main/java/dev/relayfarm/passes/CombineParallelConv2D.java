package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.nn.BiasAdd.BiasAddAttrs;
import dev.relayfarm.ops.nn.Conv2D.Conv2DAttrs;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Combines parallel {@code nn.conv2d} branches (TVM's CombineParallelConv2D, as in Inception
 * blocks): convolutions of the same input with the same attributes and the same kernel shape apart
 * from the number of output channels become one convolution over the weights concatenated along
 * the output-channel axis, and each branch takes its channels back with a {@code strided_slice}.
 * One wide convolution keeps the input in cache once and gives the code generator one bigger kernel.
 *
 * <pre>
 * %a = nn.conv2d(%x, %w1, channels=4, kernel_size=[1, 1]);
 * %b = nn.conv2d(%x, %w2, channels=8, kernel_size=[1, 1]);
 * %c = nn.conv2d(%x, %w3, channels=2, kernel_size=[1, 1]);
 *   ==>
 * %y = nn.conv2d(%x, concatenate((%w1, %w2, %w3), axis=0), channels=14, kernel_size=[1, 1]);
 * %a = strided_slice(%y, begin=[0], end=[4], axes=[1]);
 * %b = strided_slice(%y, begin=[4], end=[12], axes=[1]);
 * %c = strided_slice(%y, begin=[12], end=[14], axes=[1]);
 * </pre>
 *
 * Branches combine when they read the same data node, have equal strides, padding, dilation,
 * layouts and out_dtype, {@code groups=1} (grouped and depthwise convolutions split their channels
 * by group and cannot be stacked), static weights of equal dtype and equal shape except the
 * output-channel axis, and sit in the same block (not in different branches of an {@code if} or in
 * a closure). At least {@link Options#minBranches} of them must agree (TVM's default 3: with fewer,
 * the slices cost about what the merge saves). Branches are grouped greedily in program order; the
 * concatenation follows that order.
 *
 * <p>Followers are combined too (TVM's ParallelOpCombiner): while every branch's last op has one
 * user and those users are the same element-wise unary op ({@code nn.relu}, same attributes) or the
 * same {@code nn.bias_add} on the channel axis with a constant or parameter bias, that op is applied
 * once to the wide result (biases concatenated) and the slices move after it:
 * {@code conv2d -> bias_add -> relu} per branch becomes one wide chain and the slices.
 *
 * <p>Not done: weights and biases must be constants or parameters of the global function, so the
 * combined chain may be shared by every branch without scoping concerns (after import/bind-params
 * that is every model's case); other broadcast followers (add/multiply by a per-channel constant)
 * end the combined prefix; a branch only combines as deep as all branches of its group agree;
 * convolutions that already feed a concatenate are not recognised as a special case.
 */
public final class CombineParallelConv2D extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("combine-parallel-conv2d", 3,
            "combines conv2d branches over the same input (and their bias_add/relu) into one conv2d plus slices");
    private static final String CONV = "nn.conv2d";

    /** @param minBranches the fewest compatible branches worth combining (TVM's min_num_branches) */
    public record Options(int minBranches) {
        public static final Options DEFAULT = new Options(3);

        public Options {
            if (minBranches < 2) throw new IllegalArgumentException("minBranches must be at least 2, got " + minBranches);
        }
    }

    private final Options options;

    public CombineParallelConv2D() {
        this(Options.DEFAULT);
    }

    public CombineParallelConv2D(Options options) {
        super(INFO);
        this.options = options;
    }

    /** One set of branches that will become one convolution. */
    private static final class Combination {
        final List<Call> branches = new ArrayList<>();
        final List<Long> channels = new ArrayList<>();
        final String key;
        final int kernelOutAxis;
        final int outChannelAxis;
        /** Each branch's last combined node: its conv2d, then its followers as they are taken in. */
        List<Call> tails;
        /** The followers applied to the wide convolution, in order: the first branch's call, and the per-branch biases of a bias_add. */
        final List<Follower> followers = new ArrayList<>();
        Call combined;

        Combination(String key, int kernelOutAxis, int outChannelAxis) {
            this.key = key;
            this.kernelOutAxis = kernelOutAxis;
            this.outChannelAxis = outChannelAxis;
        }
    }

    private record Follower(Call proto, List<Expr> biases) {}

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        InferResult types = context.types();
        Set<Var> params = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        params.addAll(function.params());
        IdentityHashMap<Expr, Integer> blocks = Blocks.of(function.body());
        // Data node -> combinations over it, in program order.
        Map<Expr, List<Combination>> byData = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(function.body())) {
            if (!(e instanceof Call c) || !(c.callee() instanceof Op op) || !op.name().equals(CONV)) continue;
            if (!blocks.containsKey(e)) continue; // inside a Primitive function
            Expr weight = c.args().get(1);
            if (!(weight instanceof Constant || weight instanceof Var v && params.contains(v))) continue;
            Conv2DAttrs a = (Conv2DAttrs) OpRegistry.get(CONV).parseAttrs(c.attrs());
            if (a.groups() != 1) continue;
            if (!(types.typeOf(weight) instanceof TensorType wt) || !wt.isStatic()) continue;
            int oAxis = a.kernelLayout().name().indexOf('O');
            int cAxis = a.outLayout().name().indexOf('C');
            List<Dim> others = new ArrayList<>(wt.shape());
            others.remove(oAxis);
            String key = blocks.get(e) + "|" + Arrays.toString(a.strides()) + Arrays.toString(a.padding()) + Arrays.toString(a.dilation())
                    + a.dataLayout().name() + a.kernelLayout().name() + a.outLayout().name() + a.outDtype() + "|" + wt.dtype() + others
                    + "|" + Arrays.toString(a.kernelSize());
            List<Combination> combos = byData.computeIfAbsent(c.args().get(0), k -> new ArrayList<>());
            Combination into = null;
            for (Combination k : combos) if (k.key.equals(key)) into = k;
            if (into == null) combos.add(into = new Combination(key, oAxis, cAxis));
            into.branches.add(c);
            into.channels.add(((Dim.Int) wt.shape().get(oAxis)).value());
        }
        IdentityHashMap<Expr, Expr> soleUser = soleUsers(function.body());
        IdentityHashMap<Call, Combination> member = new IdentityHashMap<>();
        for (List<Combination> combos : byData.values()) {
            for (Combination k : combos) {
                if (k.branches.size() < options.minBranches()) continue;
                k.tails = new ArrayList<>(k.branches);
                while (takeFollowers(k, soleUser, blocks, params, types)) {}
                for (Call c : k.tails) member.put(c, k);
            }
        }
        if (member.isEmpty()) return function;

        ExprRewriter rewriter = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(pre instanceof Call c) || !member.containsKey(c)) return post;
                Combination k = member.get(c);
                if (k.combined == null) k.combined = combine(k, rewrittenData(k, this));
                int i = k.tails.indexOf(c);
                long begin = 0;
                for (int j = 0; j < i; j++) begin += k.channels.get(j);
                Attrs slice = Attrs.EMPTY
                        .with("begin", list(begin))
                        .with("end", list(begin + k.channels.get(i)))
                        .with("axes", list(k.outChannelAxis));
                return new Call(Op.get("strided_slice"), List.of(k.combined), slice, List.of(), c.span());
            }
        };
        return function.withBody(rewriter.rewrite(function.body()));
    }

    /**
     * Extends every branch of {@code k} by one follower when all of them continue the same way: each
     * tail's only user is the same element-wise unary op (same attributes), or the same
     * {@code nn.bias_add} on the channel axis with a constant or parameter bias of the branch's
     * channel count; those users become the new tails.
     */
    private static boolean takeFollowers(Combination k, IdentityHashMap<Expr, Expr> soleUser, IdentityHashMap<Expr, Integer> blocks,
            Set<Var> params, InferResult types) {
        List<Call> next = new ArrayList<>();
        List<Expr> biases = new ArrayList<>();
        Call proto = null;
        for (int i = 0; i < k.tails.size(); i++) {
            Call tail = k.tails.get(i);
            if (!(soleUser.get(tail) instanceof Call u) || !(u.callee() instanceof Op op) || u.args().getFirst() != tail) return false;
            if (!blocks.get(u).equals(blocks.get(tail))) return false;
            if (proto == null) proto = u;
            else if (!proto.callee().equals(u.callee()) || !proto.attrs().equals(u.attrs())) return false;
            if (op.name().equals("nn.bias_add")) {
                BiasAddAttrs a = (BiasAddAttrs) OpRegistry.get("nn.bias_add").parseAttrs(u.attrs());
                int rank = ((TensorType) types.typeOf(tail)).shape().size();
                if (Math.floorMod(a.axis(), rank) != k.outChannelAxis) return false;
                Expr b = u.args().get(1);
                if (!(b instanceof Constant || b instanceof Var v && params.contains(v))) return false;
                if (!(types.typeOf(b) instanceof TensorType bt) || bt.shape().size() != 1
                        || !bt.shape().getFirst().equals(Dim.of(k.channels.get(i)))) return false;
                biases.add(b);
            } else if (u.args().size() != 1 || OpRegistry.find(op.name()).map(d -> d.pattern() != OpPattern.ELEMWISE).orElse(true)) {
                return false;
            }
            next.add(u);
        }
        k.followers.add(new Follower(proto, biases.isEmpty() ? null : biases));
        k.tails = next;
        return true;
    }

    /** For each node with exactly one use in {@code body} (counting repeated arguments), that user. */
    private static IdentityHashMap<Expr, Expr> soleUsers(Expr body) {
        IdentityHashMap<Expr, Integer> uses = new IdentityHashMap<>();
        IdentityHashMap<Expr, Expr> user = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(body)) {
            for (Expr c : e.children()) {
                uses.merge(c, 1, Integer::sum);
                user.put(c, e);
            }
        }
        user.keySet().removeIf(c -> uses.get(c) != 1);
        return user;
    }

    /** The rewritten input of the branches (all read the same data node, rewritten before any branch). */
    private static Expr rewrittenData(Combination k, ExprRewriter rewriter) {
        return rewriter.rewrite(k.branches.getFirst().args().getFirst());
    }

    /** The wide convolution (the first branch's attributes with the channel total, over concatenated weights) and its followers. */
    private static Call combine(Combination k, Expr data) {
        Call wide = conv(k, data);
        for (Follower f : k.followers) {
            List<Expr> args = f.biases() == null ? List.of(wide)
                    : List.of(wide, new Call(Op.get("concatenate"), List.of(new Tuple(f.biases())), Attrs.of("axis", new AttrValue.IntValue(0))));
            wide = new Call(f.proto().callee(), args, f.proto().attrs(), List.of(), f.proto().span());
        }
        return wide;
    }

    private static Call conv(Combination k, Expr data) {
        Call first = k.branches.getFirst();
        List<Expr> weights = new ArrayList<>();
        for (Call c : k.branches) weights.add(c.args().get(1));
        Call weight = new Call(Op.get("concatenate"), List.of(new Tuple(weights)), Attrs.of("axis", new AttrValue.IntValue(k.kernelOutAxis)));
        long total = k.channels.stream().mapToLong(Long::longValue).sum();
        Attrs attrs = first.attrs().has("channels") ? first.attrs().with("channels", new AttrValue.IntValue(total)) : first.attrs();
        return new Call(first.callee(), List.of(data, weight), attrs, List.of(), first.span());
    }

    private static AttrValue list(long v) {
        return new AttrValue.ListValue(List.of(new AttrValue.IntValue(v)));
    }
}
