package dev.relayfarm.passes;

/**
 * Instrumentation of one pass run: wall time of the pass itself and of the type re-inference after
 * it, distinct IR nodes before and after, and whether it changed the module.
 */
public record PassRecord(String name, long passNanos, long inferNanos, int nodesBefore, int nodesAfter, boolean changed) {}
