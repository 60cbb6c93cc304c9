package dev.relayfarm.compile;

/**
 * Where a tensor of the compiled graph lives at run time: a caller's input or output buffer, a
 * parameter in params.bin, or an intermediate (a temp) that the memory planner places in the arena.
 */
public sealed interface Slot {
    /** Input {@code index} of @main (the caller's buffer; never written). */
    record Input(int index) implements Slot {}

    /** Parameter {@code index}: a constant of the module, loaded from params.bin once (never written). */
    record Param(int index) implements Slot {}

    /** Intermediate {@code id}: lives in the arena between its producer and its last reader. */
    record Temp(int id) implements Slot {}

    /** Output {@code index} of @main: the caller's buffer, written by the kernel producing it. */
    record Output(int index) implements Slot {}
}
