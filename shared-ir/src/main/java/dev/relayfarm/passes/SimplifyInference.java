package dev.relayfarm.passes;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ops.nn.Normalization;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.List;

/**
 * Rewrites training-style operators into their inference form over primitive operators, as TVM's
 * SimplifyInference does:
 *
 * <ul>
 *   <li>{@code nn.batch_norm(x, gamma, beta, mean, var).0} ==> {@code x * scale + shift} with
 *       {@code scale = gamma / sqrt(var + eps)} and {@code shift = beta - mean * scale}, both
 *       expand_dims'ed to broadcast along {@code axis}; scale and shift are Relay expressions over the
 *       parameters, so fold-constant finishes them when the parameters are constants;
 *   <li>{@code nn.dropout(x).0} ==> {@code x};
 *   <li>{@code nn.layer_norm(x, gamma, beta)} ==> {@code (x - mean) / sqrt(variance + eps) * gamma + beta}
 *       over {@code axis} (mean and variance with keepdims).
 * </ul>
 *
 * <pre>
 * %0 = nn.batch_norm(%x, %g, %b, %m, %v);  %0.0          // %x: Tensor[(1, 2, 3, 3)]
 *   ==>  %1 = divide(%g, sqrt(add(%v, 1e-05f)));
 *        add(multiply(%x, expand_dims(%1, axis=1, num_newaxis=2)),
 *            expand_dims(subtract(%b, multiply(%m, %1)), axis=1, num_newaxis=2))
 * </pre>
 *
 * {@code scale=False} drops gamma, {@code center=False} drops beta. Not done: the batch_norm's
 * fields 1 and 2 (the moving statistics in inference) are left reading the batch_norm call, which
 * then stays; instance_norm and group_norm do not exist as Relay operators here (the ONNX importer
 * already expands them); a data type that is not static enough to know the rank is left alone.
 */
public final class SimplifyInference extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("simplify-inference", 3,
            "batch_norm/layer_norm to primitive ops, dropout removed (inference mode)");

    public SimplifyInference() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        ExprTypes types = new ExprTypes(context.types());
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                Expr out = switch (post) {
                    case TupleGetItem t when t.index() == 0 && t.tuple() instanceof Call c && isOp(c, "nn.dropout") -> c.args().getFirst();
                    case TupleGetItem t when t.index() == 0 && t.tuple() instanceof Call c && isOp(c, "nn.batch_norm") -> batchNorm(c, types);
                    case Call c when isOp(c, "nn.layer_norm") -> layerNorm(c, types);
                    default -> null;
                };
                return out == null ? post : out;
            }
        }.rewrite(function.body()));
    }

    private static Expr batchNorm(Call bn, ExprTypes types) {
        if (!(types.of(bn.args().getFirst()) instanceof TensorType data)) return null;
        Normalization.NormAttrs a = (Normalization.NormAttrs) OpRegistry.get("nn.batch_norm").parseAttrs(bn.attrs());
        int rank = data.rank();
        int axis = a.axis() < 0 ? a.axis() + rank : a.axis();
        Expr x = bn.args().get(0);
        Expr gamma = bn.args().get(1);
        Expr beta = bn.args().get(2);
        Expr mean = bn.args().get(3);
        Expr var = bn.args().get(4);
        Expr std = Call.op("sqrt", Call.op("add", var, scalar(data.dtype(), a.epsilon())));
        Expr scale = a.scale() ? Call.op("divide", gamma, std) : Call.op("divide", scalar(data.dtype(), 1), std);
        Expr meanScaled = Call.op("multiply", mean, scale);
        Expr shift = a.center() ? Call.op("subtract", beta, meanScaled) : Call.op("negative", meanScaled);
        int trailing = rank - 1 - axis;
        return Call.op("add", Call.op("multiply", x, expand(scale, trailing)), expand(shift, trailing));
    }

    private static Expr layerNorm(Call ln, ExprTypes types) {
        if (!(types.of(ln.args().getFirst()) instanceof TensorType data)) return null;
        Normalization.NormAttrs a = (Normalization.NormAttrs) OpRegistry.get("nn.layer_norm").parseAttrs(ln.attrs());
        int rank = data.rank();
        int axis = a.axis() < 0 ? a.axis() + rank : a.axis();
        Expr x = ln.args().get(0);
        Attrs reduce = Attrs.of("axis", AttrValue.ints(axis)).with("keepdims", AttrValue.of(true));
        Expr mean = new Call(Op.get("mean"), List.of(x), reduce);
        Expr var = new Call(Op.get("variance"), List.of(x, mean), reduce);
        Expr out = Call.op("divide", Call.op("subtract", x, mean), Call.op("sqrt", Call.op("add", var, scalar(data.dtype(), a.epsilon()))));
        int trailing = rank - 1 - axis;
        if (a.scale()) out = Call.op("multiply", out, expand(ln.args().get(1), trailing));
        if (a.center()) out = Call.op("add", out, expand(ln.args().get(2), trailing));
        return out;
    }

    /** A per-channel vector made to broadcast against data whose channel axis has {@code trailing} axes after it. */
    private static Expr expand(Expr vector, int trailing) {
        if (trailing == 0) return vector;
        return new Call(Op.get("expand_dims"), List.of(vector), Attrs.of("axis", AttrValue.of(1)).with("num_newaxis", AttrValue.of(trailing)));
    }

    private static Constant scalar(DType dtype, double v) {
        return new Constant(NDArray.fromDoubles(dtype, new int[0], new double[] {v}));
    }

    private static boolean isOp(Call c, String name) {
        return c.callee() instanceof Op op && op.name().equals(name);
    }
}
