package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.PrimExpr;
import java.util.Optional;

/** {@code if (condition) then else otherwise}. */
public record IfThenElse(PrimExpr condition, Stmt then, Optional<Stmt> otherwise) implements Stmt {
    public static IfThenElse of(PrimExpr condition, Stmt then) {
        return new IfThenElse(condition, then, Optional.empty());
    }
}
