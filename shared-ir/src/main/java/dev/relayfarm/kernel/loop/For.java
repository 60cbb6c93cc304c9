package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Var;

/** {@code for (var = min; var < min + extent; ++var) body}. */
public record For(Var var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body) implements Stmt {}
