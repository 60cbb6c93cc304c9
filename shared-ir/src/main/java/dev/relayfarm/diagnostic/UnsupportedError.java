package dev.relayfarm.diagnostic;

/** A well-formed, well-typed model that uses what the compiler cannot do yet: a graph the executor cannot run (control flow on input values, dynamic shapes), an operator without a kernel. */
public non-sealed interface UnsupportedError extends CompileError {}
