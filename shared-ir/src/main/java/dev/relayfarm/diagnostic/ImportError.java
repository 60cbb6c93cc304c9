package dev.relayfarm.diagnostic;

/** The model cannot be read into IR: Relay text with a syntax error, a malformed ONNX file, an ONNX operator or dtype the importer does not support. */
public non-sealed interface ImportError extends CompileError {}
