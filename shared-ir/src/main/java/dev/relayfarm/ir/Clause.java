package dev.relayfarm.ir;

/** One arm of a {@link Match}: {@code pattern => body}. */
public record Clause(Pattern pattern, Expr body) {}
