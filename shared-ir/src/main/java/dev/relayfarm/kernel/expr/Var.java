package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A scalar variable (a loop index, a reduction index). The id makes each variable distinct even when
 * names repeat: substitution and bound maps key on the record, i.e. on (name, id, dtype).
 */
public record Var(String name, long id, DType dtype) implements PrimExpr {
    private static final AtomicLong NEXT = new AtomicLong();

    /** A fresh int64 index variable. */
    public static Var index(String name) {
        return new Var(name, NEXT.incrementAndGet(), DType.INT64);
    }

    @Override
    public String toString() {
        return name;
    }
}
