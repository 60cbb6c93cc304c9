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
import java.util.ArrayList;
import java.util.List;

/**
 * Turns shape-carrying operators into static ones where the shape they take from a tensor is known
 * statically. In TVM this pass turns {@code dyn.*} operators (shapes as tensors) into their static
 * forms once the shape tensors are constants. Our operators already take shapes, sizes and axes as
 * attributes, and there are no {@code dyn.*} variants, so what is dynamic here is narrower:
 *
 * <ul>
 *   <li>{@code shape_of(x)} ==> a constant when {@code x}'s type is static (as fold-constant does;
 *       kept here so the pass stands alone);
 *   <li>{@code zeros_like(x)}, {@code ones_like(x)}, {@code full_like(x, v)} ==> {@code zeros},
 *       {@code ones}, {@code full(v)} with x's static shape and dtype as attributes;
 *   <li>{@code reshape_like(x, y)} ==> {@code reshape(x, newshape=...)} with its static result shape.
 * </ul>
 *
 * Each drops a dependency on a tensor whose value is not needed, only its shape; so the tensor must
 * be pure to be dropped (see {@link Purity}), and its type must be static (no Any or symbolic dims).
 *
 * <pre>
 * def @main(%x: Tensor[(2, 3), float32]) { add(%x, ones_like(%x)) }
 *   ==>  def @main(%x: Tensor[(2, 3), float32]) { add(%x, ones(shape=[2, 3], dtype="float32")) }
 * </pre>
 *
 * Not done, and why: ops whose output shape depends on tensor <em>values</em> ({@code arange},
 * {@code argwhere}, {@code unique}, {@code vision.onnx_non_max_suppression}) become static only by
 * evaluating them, which is fold-constant's job once their inputs are constants; annotations with Any
 * dims (parameters, let variables) are left as they are: a parameter's Any is part of the function's
 * contract, and checked types of let variables are recomputed by inference after every pass anyway.
 */
public final class DynamicToStatic extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("dynamic-to-static", 3,
            "shape_of/*_like/reshape_like of statically shaped tensors to constants and static ops");

    public DynamicToStatic() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        ExprTypes types = new ExprTypes(context.types());
        Purity purity = Purity.local();
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                purity.isPure(post);
                if (!(post instanceof Call c) || !(c.callee() instanceof Op op)) return post;
                Expr out = switch (op.name()) {
                    case "shape_of" -> staticOf(c.args().getFirst(), types, purity) instanceof TensorType t
                            ? FoldConstant.shapeConstant(t, c.attrs(), c.span()) : null;
                    case "zeros_like", "ones_like" -> staticOf(c.args().getFirst(), types, purity) instanceof TensorType t
                            ? new Call(Op.get(op.name().replace("_like", "")), List.of(), init(t), List.of(), c.span()) : null;
                    case "full_like" -> staticOf(c.args().getFirst(), types, purity) instanceof TensorType t
                            ? new Call(Op.get("full"), List.of(c.args().get(1)), init(t), List.of(), c.span()) : null;
                    case "reshape_like" -> purity.isPure(c.args().get(1)) && types.of(pre) instanceof TensorType t && t.isStatic()
                            ? new Call(Op.get("reshape"), List.of(c.args().getFirst()), Attrs.of("newshape", shape(t)), List.of(), c.span()) : null;
                    default -> null;
                };
                if (out == null) return post;
                purity.isPure(out);
                types.stands(out, pre);
                return out;
            }
        }.rewrite(function.body()));
    }

    /** {@code e}'s type when it is a static tensor type and {@code e} may be dropped; else null. */
    private static TensorType staticOf(Expr e, ExprTypes types, Purity purity) {
        return purity.isPure(e) && types.of(e) instanceof TensorType t && t.isStatic() ? t : null;
    }

    private static Attrs init(TensorType t) {
        return Attrs.of("shape", shape(t)).with("dtype", AttrValue.of(t.dtype().toString()));
    }

    private static AttrValue shape(TensorType t) {
        List<AttrValue> dims = new ArrayList<>();
        for (int d : t.staticShape()) dims.add(AttrValue.of(d));
        return new AttrValue.ListValue(dims);
    }
}
