package dev.relayfarm.diagnostic;

/** What the request gave besides the model is wrong: the format, the shapes, the target, the opt level, a file that does not exist or is not text, an option's value. */
public non-sealed interface InputError extends CompileError {}
