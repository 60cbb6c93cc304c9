package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.Buffer;

/** Makes {@code buffer} exist while {@code body} runs. */
public record Allocate(Buffer buffer, Scope scope, Stmt body) implements Stmt {}
