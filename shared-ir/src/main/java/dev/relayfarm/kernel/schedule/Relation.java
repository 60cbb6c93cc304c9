package dev.relayfarm.kernel.schedule;

/** How a stage's axes derive from each other: the record of the splits and fuses applied. */
sealed interface Relation {
    record Split(Axis parent, Axis outer, Axis inner, int factor) implements Relation {}

    record Fuse(Axis outer, Axis inner, Axis fused) implements Relation {}
}
