package dev.relayfarm.kernel.schedule;

import dev.relayfarm.kernel.expr.Var;

/**
 * One axis of a stage during lowering: a root axis of the compute or one made by split/fuse. Compared
 * by identity; {@code var} is its loop variable once it is a leaf.
 */
final class Axis {
    final String name;
    final boolean reduce;
    final Var var;

    Axis(String name, boolean reduce, Var var) {
        this.name = name;
        this.reduce = reduce;
        this.var = var;
    }

    @Override
    public String toString() {
        return name;
    }
}
