package dev.relayfarm.diagnostic;

/** The model needs more than the configured limits allow (kernels, steps, generated source, arena memory); the message names the setting that raises the limit. */
public non-sealed interface LimitError extends CompileError {}
