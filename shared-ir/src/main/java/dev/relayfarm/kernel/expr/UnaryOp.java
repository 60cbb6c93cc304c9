package dev.relayfarm.kernel.expr;

/** Unary operators: arithmetic negation, logical not (bool result), bitwise complement (integers). */
public enum UnaryOp { NEG, NOT, BITNOT }
