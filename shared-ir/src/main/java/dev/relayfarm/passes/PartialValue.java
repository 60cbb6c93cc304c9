package dev.relayfarm.passes;

import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import java.util.List;

/**
 * What {@link PartialEvaluator} knows about a value at compile time (the "partially static values"
 * of the Relay paper's partial evaluator): a fully known tensor, a tuple or ADT value whose
 * structure is known while some fields may not be, a closure (function plus the environment it
 * captured), a reference cell whose contents the simulated store may know, a named function, or
 * nothing at all ({@link Dynamic}: only residual code computes it).
 *
 * <p>Static values other than references carry no residual code of their own: the evaluator emits
 * code for one ({@code PartialEvaluator.reify}) only where the residual program needs it, so a tuple
 * that is only projected, or a closure that is only applied, leaves nothing behind. Instances are
 * compared by identity (the evaluator caches emitted code per value object).
 */
sealed interface PartialValue {

    /** Known only at run time; {@code atom} (a variable, constant or name) holds it in residual code. */
    record Dynamic(Expr atom) implements PartialValue {}

    /** A known tensor; {@code constant} is the node residual code uses for it. */
    record StaticTensor(NDArray data, Constant constant) implements PartialValue {
        StaticTensor(NDArray data) {
            this(data, new Constant(data));
        }
    }

    /** A tuple of known arity; its fields may be static or not. */
    record StaticTuple(List<PartialValue> fields) implements PartialValue {
        public StaticTuple {
            fields = List.copyOf(fields);
        }
    }

    /** A value built by {@code constructor} from {@code fields} ({@code Nil}, {@code Cons(h, t)}). */
    record StaticAdt(Constructor constructor, List<PartialValue> fields) implements PartialValue {
        public StaticAdt {
            fields = List.copyOf(fields);
        }
    }

    /**
     * A local function and the frame it was created in; {@code name} is the let variable it is bound
     * to (a hint for the residual binding), or {@code null} for an anonymous function.
     */
    record StaticClosure(Function function, PartialEvaluator.Frame env, Var name) implements PartialValue {}

    /** A global function used as a value. */
    record StaticGlobal(GlobalVar global) implements PartialValue {}

    /** An operator used as a value. */
    record StaticOp(Op op) implements PartialValue {}

    /** A constructor with fields used as a function ({@code Cons} before it is applied). */
    record StaticConstructorFn(Constructor constructor) implements PartialValue {}

    /**
     * A reference cell allocated by this evaluation: {@code var} is the residual binding of its
     * {@code ref(...)} (allocation is always emitted, as the cell may escape), and the cell itself
     * (this object) keys the simulated store.
     */
    record StaticRef(Var var) implements PartialValue {}

    /** Whether nothing about this value is known at run time only: a tensor, or a tuple of such. */
    static boolean isConstantData(PartialValue v) {
        return switch (v) {
            case StaticTensor t -> true;
            case StaticTuple t -> t.fields().stream().allMatch(PartialValue::isConstantData);
            default -> false;
        };
    }
}
