package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.PrimExpr;

/** Evaluates an expression for its effect (a call); its value is dropped. */
public record Evaluate(PrimExpr value) implements Stmt {}
