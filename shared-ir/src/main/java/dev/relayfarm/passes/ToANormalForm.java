package dev.relayfarm.passes;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;

/**
 * A-normal form: every non-atomic sub-expression gets its own let binding, so each operation's
 * operands are atoms (variables, globals, constants, operators, constructors) and the order of
 * evaluation is spelled out. Each binding goes into the innermost scope (if branch, match clause,
 * function body) that contains all uses of its value ({@link ScopeFill}); a node shared in the
 * dataflow graph is bound once. As in TVM, every block ends with a variable, and primitive
 * (fused) functions are bound but their bodies are kernels and stay as they are.
 *
 * <pre>
 * fn (%x) { if (%c) { add(exp(%x), 1f) } else { %x } }
 *   ==>  fn (%x) { let %a = if (%c) { let %b = exp(%x); let %d = add(%b, 1f); %d } else { %x }; %a }
 * </pre>
 *
 * Not done: constants are treated as atoms (TVM binds them too; binding a literal computes nothing).
 * A value shared between a nested function body and its enclosing scope is bound in the enclosing
 * scope, so it is computed once instead of per call (a difference only for an effectful shared node).
 */
public final class ToANormalForm extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("to-a-normal-form", 1,
            "let-binds every non-atomic sub-expression in the scope that dominates its uses");

    public ToANormalForm() {
        super(INFO);
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        return ScopeFill.fill(function, (node, lifted, tail) -> true);
    }
}
