package dev.relayfarm.ad;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.List;

/**
 * One operator call as its gradient rule sees it: the primal argument values and result, bound to
 * variables (so a rule may use them any number of times without recomputing them), with their checked
 * types. An argument of tuple type ({@code concatenate}'s input) is one variable of that tuple type.
 *
 * @param call     the original call (its attributes and span)
 * @param args     the primal arguments, in order
 * @param argTypes their types
 * @param out      the primal result
 * @param outType  its type (a tensor, or a tuple of tensors for split-like operators)
 */
public record GradientCall(Call call, List<Var> args, List<Type> argTypes, Var out, Type outType) {
    public GradientCall {
        args = List.copyOf(args);
        argTypes = List.copyOf(argTypes);
    }

    public String op() {
        return ((Op) call.callee()).name();
    }

    public Attrs attrs() {
        return call.attrs();
    }

    /** The call's typed attributes record, as its operator parses them (e.g. {@code Conv2DAttrs}). */
    @SuppressWarnings("unchecked")
    public <A> A parsedAttrs() {
        return (A) dev.relayfarm.ops.registry.OpRegistry.get(op()).parseAttrs(call.attrs());
    }

    public Var arg(int i) {
        return args.get(i);
    }

    /** The tensor type of argument {@code i}; a rule asking this of a tuple argument is a bug in the rule. */
    public TensorType argType(int i) {
        return tensor(argTypes.get(i), "argument " + i);
    }

    public TupleType argTupleType(int i) {
        if (argTypes.get(i) instanceof TupleType t) return t;
        throw new GradientException(op() + ": argument " + i + " is " + argTypes.get(i) + ", not a tuple");
    }

    public TensorType outTensorType() {
        return tensor(outType, "result");
    }

    private TensorType tensor(Type t, String what) {
        if (t instanceof TensorType tt) return tt;
        throw new GradientException(op() + ": " + what + " is " + t + ", not a tensor");
    }
}
