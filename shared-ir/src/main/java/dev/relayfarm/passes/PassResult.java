package dev.relayfarm.passes;

import dev.relayfarm.ir.IRModule;

/**
 * A pass's answer: the module after it, and whether it changed anything (XLA's rule: tests check the
 * "no change" answer too). {@code changed == false} promises {@code module} is the input object.
 */
public record PassResult(IRModule module, boolean changed) {
    public static PassResult unchanged(IRModule module) {
        return new PassResult(module, false);
    }

    /** Changed exactly when {@code after} is a different object from {@code before} (copy-on-write). */
    public static PassResult of(IRModule before, IRModule after) {
        return new PassResult(after, after != before);
    }
}
