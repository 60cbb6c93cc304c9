package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
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
 * ({@link #pixelShuffle}). Not done: data whose rank is not known (no tensor type) is left alone.
 */
public final class CanonicalizeOps extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("canonicalize-ops", 3,
            "nn.bias_add to add with an expand_dims'ed bias; conv2d_transpose with kernel = stride to a 1x1 conv2d and a depth-to-space");

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

    private static Call call(String op, Expr arg, Attrs attrs) {
        return new Call(Op.get(op), List.of(arg), attrs, List.of(), dev.relayfarm.ir.Span.NONE);
    }

    private static AttrValue ints(long... values) {
        return AttrValue.ints(values);
    }
}
