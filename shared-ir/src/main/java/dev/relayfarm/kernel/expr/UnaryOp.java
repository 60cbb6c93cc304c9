package dev.relayfarm.kernel.expr;

/** Unary operators. */
public enum UnaryOp { NEG, NOT }
