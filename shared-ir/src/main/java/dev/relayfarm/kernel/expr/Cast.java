package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/** Converts {@code value} to {@code dtype} with C's conversion rules. */
public record Cast(DType dtype, PrimExpr value) implements PrimExpr {}
