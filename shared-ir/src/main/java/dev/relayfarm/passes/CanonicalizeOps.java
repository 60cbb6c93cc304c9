package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.nn.BiasAdd;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.List;

/**
 * Rewrites operators into the simpler ones later passes and code generators handle, as TVM's
 * CanonicalizeOps does: {@code nn.bias_add(x, b, axis)} ==> {@code add(x, expand_dims(b, ...))} with
 * one trailing unit axis per data axis after {@code axis}, so the bias broadcasts along {@code axis}.
 *
 * <pre>
 * nn.bias_add(%x: Tensor[(1, 16, 8, 8)], %b)            ==>  add(%x, expand_dims(%b, axis=1, num_newaxis=2))
 * nn.bias_add(%x: Tensor[(4, 16)], %b, axis=-1)          ==>  add(%x, %b)
 * </pre>
 *
 * A transposed convolution whose kernel is its stride becomes a 1x1 convolution and a depth-to-space
 * ({@link #pixelShuffle}); a convolution of a few groups no channel block divides becomes one ungrouped
 * convolution with a block-diagonal weight ({@link #ungroup}). Not done: data whose rank is not known (no tensor type) is left alone.
 */
public final class CanonicalizeOps extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("canonicalize-ops", 3,
            "nn.bias_add to add with an expand_dims'ed bias; conv2d_transpose with kernel = stride to a 1x1 conv2d and a depth-to-space; "
                    + "conv2d of <= 4 groups no channel block divides to one conv2d with a block-diagonal weight");

    public CanonicalizeOps() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        ExprTypes types = new ExprTypes(context.types());
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                if (!(post instanceof Call c) || !(c.callee() instanceof Op op)) return post;
                if (op.name().equals("nn.conv2d_transpose")) {
                    Expr unpooled = pixelShuffle(c, types);
                    return unpooled == null ? post : unpooled;
                }
                if (op.name().equals("nn.conv2d")) {
                    Expr dense = ungroup(c, types, context.options().target().channelBlocks());
                    return dense == null ? post : dense;
                }
                if (!op.name().equals("nn.bias_add")) return post;
                if (!(types.of(c.args().getFirst()) instanceof TensorType data)) return post;
                BiasAdd.BiasAddAttrs a = (BiasAdd.BiasAddAttrs) OpRegistry.get("nn.bias_add").parseAttrs(c.attrs());
                int axis = a.axis() < 0 ? a.axis() + data.rank() : a.axis();
                int trailing = data.rank() - 1 - axis;
                Expr bias = c.args().get(1);
                if (trailing > 0) {
                    bias = new Call(Op.get("expand_dims"), List.of(bias),
                            Attrs.of("axis", AttrValue.of(1)).with("num_newaxis", AttrValue.of(trailing)));
                }
                return new Call(Op.get("add"), List.of(c.args().get(0), bias), Attrs.EMPTY, List.of(), c.span());
            }
        }.rewrite(function.body()));
    }

    /**
     * A transposed convolution whose kernel equals its stride ({@code s x s}, no padding, dilation or output padding,
     * one group, NCHW/IOHW): every output pixel takes exactly one input pixel and one kernel tap, so it is a 1x1
     * convolution to {@code O*s*s} channels followed by moving each tap's channels to its place in the output
     * (a depth-to-space), and the 1x1 convolution is computed like any other (blocked, vectorized):
     * <pre>
     * nn.conv2d_transpose(%x: (N, I, H, W), %w: (I, O, s, s), strides=[s, s])
     *   ==> %y = nn.conv2d(%x, reshape(transpose(%w, axes=[1, 2, 3, 0]), newshape=[O*s*s, I, 1, 1]))
     *       reshape(transpose(reshape(%y, newshape=[N, O, s, s, H, W]), axes=[0, 1, 4, 2, 5, 3]), newshape=[N, O, H*s, W*s])
     * </pre>
     * Null when the call is not of that form.
     */
    private static Expr pixelShuffle(Call c, ExprTypes types) {
        dev.relayfarm.ops.nn.Conv2DTranspose.Conv2DTransposeAttrs at =
                (dev.relayfarm.ops.nn.Conv2DTranspose.Conv2DTransposeAttrs) OpRegistry.get("nn.conv2d_transpose").parseAttrs(c.attrs());
        dev.relayfarm.ops.nn.Conv2D.Conv2DAttrs a = at.conv();
        if (!(types.of(c.args().get(0)) instanceof TensorType x) || !(types.of(c.args().get(1)) instanceof TensorType w)) return null;
        if (!x.isStatic() || !w.isStatic() || a.groups() != 1 || a.outDtype() != null && !a.outDtype().equals(x.dtype())) return null;
        if (!a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("IOHW") || !a.outLayout().name().equals("NCHW")) return null;
        int s = a.strides()[0];
        if (s < 2 || a.strides()[1] != s || w.staticShape()[2] != s || w.staticShape()[3] != s) return null;
        for (int v : a.padding()) if (v != 0) return null;
        if (a.dilation()[0] != 1 || a.dilation()[1] != 1 || at.outputPadding()[0] != 0 || at.outputPadding()[1] != 0) return null;
        int[] xs = x.staticShape(), ws = w.staticShape();
        long n = xs[0], in = xs[1], h = xs[2], wd = xs[3], out = ws[1];
        Expr weight = call("reshape", call("transpose", c.args().get(1), Attrs.of("axes", ints(1, 2, 3, 0))),
                Attrs.of("newshape", ints(out * s * s, in, 1, 1)));
        Expr conv = new Call(Op.get("nn.conv2d"), List.of(c.args().get(0), weight),
                Attrs.of("channels", AttrValue.of(out * s * s)).with("kernel_size", ints(1, 1)), List.of(), c.span());
        Expr taps = call("reshape", conv, Attrs.of("newshape", ints(n, out, s, s, h, wd)));
        Expr placed = call("transpose", taps, Attrs.of("axes", ints(0, 1, 4, 2, 5, 3)));
        return new Call(Op.get("reshape"), List.of(placed), Attrs.of("newshape", ints(n, out, h * s, wd * s)), List.of(), c.span());
    }

    /** At most this many groups are merged into one convolution: the merged one does this many times the work. */
    static final int MAX_UNGROUPED = 4;

    /**
     * A grouped convolution whose groups no channel block divides (ShuffleNet's 4 groups of 34 or 6 channels) cannot be
     * blocked group by group, and in NCHW it runs at a fifth of a blocked convolution's speed; with at most
     * {@link #MAX_UNGROUPED} groups it becomes one convolution over all channels with a block-diagonal weight (zero
     * between groups), which alter-op-layout blocks like its neighbours:
     * <pre>
     * nn.conv2d(%x: (N, C, H, W), %w: (O, C/G, KH, KW), groups=G)
     *   ==> nn.conv2d(%x, reshape(multiply(reshape(%w, newshape=[G, O/G, 1, C/G, KH, KW]), eye[G, 1, G, 1, 1, 1]),
     *                             newshape=[O, C, KH, KW]))
     * </pre>
     * The weight expression folds to a constant when the weight is one. Null when the call is not of that form, when
     * a block divides the groups' channels (alter-op-layout blocks it as it is), or when no block divides the totals.
     */
    private static Expr ungroup(Call c, ExprTypes types, List<Integer> blocks) {
        dev.relayfarm.ops.nn.Conv2D.Conv2DAttrs a = (dev.relayfarm.ops.nn.Conv2D.Conv2DAttrs) OpRegistry.get("nn.conv2d").parseAttrs(c.attrs());
        int g = a.groups();
        if (g < 2 || g > MAX_UNGROUPED) return null;
        if (!(types.of(c.args().get(0)) instanceof TensorType x) || !(types.of(c.args().get(1)) instanceof TensorType w)) return null;
        if (!x.isStatic() || !w.isStatic() || !x.dtype().equals(dev.relayfarm.ir.DType.FLOAT32) || !w.dtype().equals(x.dtype())) return null;
        if (!a.dataLayout().name().equals("NCHW") || !a.kernelLayout().name().equals("OIHW") || !a.outLayout().name().equals("NCHW")) return null;
        int[] ws = w.staticShape();
        int out = ws[0], inG = ws[1], outG = out / g, in = inG * g;
        if (x.staticShape()[1] != in) return null;
        // what CpuLayoutHooks blocks group by group (its blocks, then half the smallest)
        List<Integer> groupBlocks = CpuLayoutHooks.halfBlocks(blocks);
        boolean blockedPerGroup = groupBlocks.stream().anyMatch(b -> inG % b == 0) && groupBlocks.stream().anyMatch(b -> outG % b == 0);
        boolean blockedWhole = blocks.stream().anyMatch(b -> in % b == 0) && blocks.stream().anyMatch(b -> out % b == 0);
        if (blockedPerGroup || !blockedWhole) return null;
        float[] eye = new float[g * g];
        for (int i = 0; i < g; i++) eye[i * g + i] = 1;
        Expr mask = new dev.relayfarm.ir.Constant(NDArray.wrap(dev.relayfarm.ir.DType.FLOAT32, new int[] {g, 1, g, 1, 1, 1}, eye));
        Expr split = call("reshape", c.args().get(1), Attrs.of("newshape", ints(g, outG, 1, inG, ws[2], ws[3])));
        Expr diagonal = new Call(Op.get("multiply"), List.of(split, mask), Attrs.EMPTY, List.of(), dev.relayfarm.ir.Span.NONE);
        Expr weight = call("reshape", diagonal, Attrs.of("newshape", ints(out, in, ws[2], ws[3])));
        return new Call(c.callee(), List.of(c.args().get(0), weight), c.attrs().with("groups", AttrValue.of(1)), List.of(), c.span());
    }

    private static Call call(String op, Expr arg, Attrs attrs) {
        return new Call(Op.get(op), List.of(arg), attrs, List.of(), dev.relayfarm.ir.Span.NONE);
    }

    private static AttrValue ints(long... values) {
        return AttrValue.ints(values);
    }
}
