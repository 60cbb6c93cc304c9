package dev.relayfarm.kernel.loop;

/**
 * A statement of the loop-level IR, the output of lowering and the input of the code generators.
 * Nodes are records; printers and passes switch over them exhaustively.
 */
public sealed interface Stmt permits For, Store, Allocate, IfThenElse, Seq, Evaluate {}
