package dev.relayfarm.diagnostic;

/** The model is ill-typed: a type mismatch, or an operator's constraint (a type relation) violated by the model's shapes. */
public non-sealed interface TypeCheckError extends CompileError {}
