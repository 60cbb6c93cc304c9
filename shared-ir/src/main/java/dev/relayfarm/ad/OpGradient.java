package dev.relayfarm.ad;

import dev.relayfarm.ir.Expr;
import java.util.List;

/**
 * An operator's reverse-mode rule (TVM's {@code FPrimalGradient}): given the call and the adjoint of its
 * result, the adjoints of its arguments as Relay expressions over the primal values. One entry per argument,
 * in order; {@code null} for an argument the result does not depend on differentiably (indices, shapes).
 * For a tuple argument the entry is a tuple expression of the fields' adjoints; for a tuple result
 * {@code outGrad} is a tuple of the fields' adjoints.
 */
@FunctionalInterface
public interface OpGradient {
    List<Expr> backward(GradientCall call, Expr outGrad);
}
