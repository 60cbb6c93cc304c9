package dev.relayfarm.interp;

import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.Op;

/**
 * A named callable used as a value: a global function ({@code @f} passed to {@code @map}), a
 * constructor that takes arguments ({@code Cons}), or a primitive operator. Calling it is the same
 * as calling the name directly.
 */
public record FunctionRefValue(Expr target) implements Value {
    public FunctionRefValue {
        if (!(target instanceof GlobalVar || target instanceof Constructor || target instanceof Op)) {
            throw new IllegalArgumentException("a function reference names a global, a constructor or an operator, got " + target);
        }
    }
}
