package dev.relayfarm.passes;

import dev.relayfarm.ir.IRModule;

/**
 * A module-to-module transformation. The module a pass receives is well-typed and is exactly the
 * module of {@link PassContext#types()}, so a pass can ask for the type of any of its nodes; the
 * pass manager re-infers types after a pass that reports a change. A pass must not mutate anything
 * and must return the input module itself when it changes nothing.
 *
 * <p>Adding a pass is one class (a {@link Pass} or {@link FunctionPass}) plus one line in
 * {@link PassRegistry}.
 */
public interface Pass {
    PassInfo info();

    PassResult run(IRModule module, PassContext context);

    default String name() {
        return info().name();
    }
}
