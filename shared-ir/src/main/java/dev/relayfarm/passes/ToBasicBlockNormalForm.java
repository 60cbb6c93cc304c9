package dev.relayfarm.passes;

import dev.relayfarm.ir.IRModule;

/**
 * Basic-block normal form (TVM's): a basic block is a function body, an {@code if} branch or a
 * {@code match} clause. A dataflow node used from more than one block (both branches, a branch and
 * the condition, a function body and its enclosing scope) is let-bound in the innermost block
 * containing all its uses ({@link ScopeFill}), so every block refers only to its own dataflow and to
 * variables. Pure dataflow used within one block stays as it is.
 *
 * <p>Also bound: every node with an effect of its own (a reference operation, a call of a possibly
 * impure function, an {@code if}/{@code match} whose branches have effects, see {@link Purity}),
 * except the one a block ends with. Otherwise a shared node bound ahead could overtake an effect
 * still written inside an expression; with effects bound in evaluation order their order is kept.
 *
 * <pre>
 * fn (%x, %c) { %0 = exp(%x); if (%c) { add(%0, 1f) } else { %0 } }
 *   ==>  fn (%x, %c) { let %a = exp(%x); if (%c) { add(%a, 1f) } else { %a } }
 * </pre>
 *
 * Not done: nothing is bound only for being large; primitive function bodies are not entered.
 */
public final class ToBasicBlockNormalForm implements Pass {
    private static final PassInfo INFO = new PassInfo("to-basic-block-normal-form", 1,
            "let-binds dataflow shared across basic blocks (and effects), leaving pure dataflow in its block");

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        Purity purity = Purity.of(module);
        return PassResult.of(module, FunctionPass.mapFunctions(module,
                (g, f) -> ScopeFill.fill(f, (node, lifted, tail) -> lifted || (!tail && purity.hasLocalEffect(node)))));
    }
}
