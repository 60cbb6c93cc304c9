package dev.relayfarm.passes;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.InterpreterException;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Type;
import java.util.ArrayList;
import java.util.List;

/**
 * Folds away the computations on tensors with no elements, so that no kernel reads or writes one
 * (the kernels and the graph executor need every dimension positive). A tensor of a static shape with
 * a zero dimension has exactly one value, so:
 *
 * <ul>
 *   <li>any pure expression of such a type (an operator call, a projection, a use of a parameter or a
 *       let-bound variable) becomes that constant;
 *   <li>{@code concatenate} drops the empty fields of its tuple (keeping one, if all are empty);
 *   <li>an operator call whose arguments are all constants, one of them empty or computed here from
 *       empty ones (a reduction over an empty axis, a pad of an empty tensor, log-sum-exp adding back
 *       the max of an empty set) is evaluated with the reference interpreter, as {@code fold-constant}
 *       would, but at every opt level that compiles. Weights are never treated as known.
 * </ul>
 *
 * <pre>
 * def @main(%x: Tensor[(2, 3), float32]) {
 *   %0 = concatenate((zeros(shape=[2, 0], dtype="float32"), %x), axis=1);
 *   (%0, strided_slice(%0, begin=[3], end=[3], strides=[1], axes=[1]))
 * }
 *   ==>  (concatenate((%x,), axis=1), meta[relay.Constant][0])      the constant: float32 of shape (2, 0)
 * </pre>
 *
 * Not done: calls of functions are left as they are (they may have effects); an empty operand of any
 * other operator whose other operands are not constant (say an {@code einsum} contracting an empty
 * axis) stays, and fails at lowering; a result larger than {@link FoldConstant.Options#DEFAULT}'s
 * {@code maxElements} is not folded.
 */
public final class FoldEmptyTensors extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("fold-empty", 1,
            "replaces tensors with no elements by constants, drops them from concatenate, evaluates calls over empty constants and what was computed from them");

    public FoldEmptyTensors() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        ExprTypes types = new ExprTypes(context.types());
        Purity purity = Purity.local();
        // constants this pass made (empty tensors and what was computed from them): a call over nothing
        // else reads no run-time data, so it is computed too (the log-sum-exp of an empty set: max is
        // -inf from the empty x alone, then log(sum(exp(x - max))) + max is constant as well)
        java.util.Set<Expr> derived = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        return function.withBody(new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                types.stands(post, pre);
                purity.isPure(post);
                Expr out = fold(post, types.of(pre), purity, types, derived);
                if (out != post) {
                    types.stands(out, pre);
                    purity.isPure(out);
                }
                return out;
            }
        }.rewrite(function.body()));
    }

    private static Expr fold(Expr e, Type type, Purity purity, ExprTypes types, java.util.Set<Expr> derived) {
        if (e instanceof Constant || e instanceof Function) return e;
        if (isEmpty(type) && purity.isPure(e)) {
            TensorType t = (TensorType) type;
            Constant empty = new Constant(NDArray.zeros(t.dtype(), t.staticShape()), e.span());
            derived.add(empty);
            return empty;
        }
        if (!(e instanceof Call c) || !(c.callee() instanceof Op op)) return e;
        if (op.name().equals("concatenate") && c.args().getFirst() instanceof Tuple tuple) {
            List<Expr> kept = new ArrayList<>();
            for (Expr f : tuple.fields()) if (!isEmpty(types.of(f))) kept.add(f);
            if (kept.isEmpty()) kept.add(tuple.fields().getFirst());
            if (kept.size() == tuple.fields().size()) return e;
            List<Expr> args = new ArrayList<>(c.args());
            args.set(0, new Tuple(kept, tuple.span()));
            return new Call(c.callee(), args, c.attrs(), c.typeArgs(), c.span());
        }
        boolean readsEmpty = false;
        for (Expr a : c.args()) {
            if (!FoldConstant.isConstant(a)) return e;
            readsEmpty |= a instanceof Constant k && k.data().elementCount() == 0 || derived.contains(a);
        }
        if (!readsEmpty || FoldConstant.elements(type) < 0 || FoldConstant.elements(type) > FoldConstant.Options.DEFAULT.maxElements()) return e;
        try {
            Value v = new Interpreter(IRModule.EMPTY, FoldConstant.budget(FoldConstant.Options.DEFAULT)).evaluate(c);
            if (!(v instanceof TensorValue t)) return e;
            Constant computed = new Constant(t.data(), c.span());
            derived.add(computed);
            return computed;
        } catch (InterpreterException ex) {
            if (ex.budget() == dev.relayfarm.interp.InterpreterOptions.Budget.INTERRUPTED) throw ex;
            return e; // fails at run time as it would have
        } catch (RuntimeException ex) {
            return e;
        }
    }

    /** A tensor type of static shape with a zero dimension. */
    static boolean isEmpty(Type type) {
        if (!(type instanceof TensorType t) || !t.isStatic()) return false;
        for (int d : t.staticShape()) if (d == 0) return true;
        return false;
    }
}
