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
 * Not done: data whose rank is not known (no tensor type) is left alone; TVM's other
 * canonicalizations (e.g. of {@code nn.conv2d_transpose} layouts) have no counterpart here.
 */
public final class CanonicalizeOps extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("canonicalize-ops", 3,
            "nn.bias_add to add with an expand_dims'ed bias");

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
                if (!(post instanceof Call c) || !(c.callee() instanceof Op op) || !op.name().equals("nn.bias_add")) return post;
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
}
