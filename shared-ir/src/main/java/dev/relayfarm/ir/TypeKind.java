package dev.relayfarm.ir;

/** What a type variable ranges over. */
public enum TypeKind {
    /** Any type (the default for {@code [A]} parameters). */
    TYPE,
    /** A shape dimension. */
    SHAPE_VAR,
    /** An element dtype. */
    BASE_TYPE,
    /** A type constraint. */
    CONSTRAINT,
    /** The head of an algebraic data type. */
    ADT_HANDLE
}
