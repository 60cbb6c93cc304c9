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
import dev.relayfarm.ops.OpRegistry;
import dev.relayfarm.ops.nn.Conv2D.Conv2DAttrs;
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
 * <p>Not done: element-wise followers (bias_add, relu) are not combined into the wide convolution
 * (they stay per branch, after their slice; fuse-ops fuses each with its slice); weights must be
 * constants or parameters of the global function, so the combined convolution may be shared by
 * every branch without scoping concerns (after bind-params/import that is every model's case);
 * convolutions that already feed a concatenate are not recognised as a special case.
 */
public final class CombineParallelConv2D extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("combine-parallel-conv2d", 3,
            "combines conv2d branches over the same input into one conv2d plus slices");
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
        Call combined;

        Combination(String key, int kernelOutAxis, int outChannelAxis) {
            this.key = key;
            this.kernelOutAxis = kernelOutAxis;
            this.outChannelAxis = outChannelAxis;
        }
    }

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
        IdentityHashMap<Call, Combination> member = new IdentityHashMap<>();
        for (List<Combination> combos : byData.values()) {
            for (Combination k : combos) {
                if (k.branches.size() >= options.minBranches()) for (Call c : k.branches) member.put(c, k);
            }
        }
        if (member.isEmpty()) return function;

        ExprRewriter rewriter = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (!(pre instanceof Call c) || !member.containsKey(c)) return post;
                Combination k = member.get(c);
                if (k.combined == null) k.combined = combine(k, ((Call) post).args().get(0));
                int i = k.branches.indexOf(c);
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

    /** The wide convolution: the first branch's attributes with the channel total, over concatenated weights. */
    private static Call combine(Combination k, Expr data) {
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
