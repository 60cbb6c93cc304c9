package dev.relayfarm.passes;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;

/**
 * Partial evaluation (the Relay paper's partially static interpreter, after TVM's
 * {@code PartialEvaluate}): runs every global function with dynamic parameters, computing at compile
 * time everything that depends only on what is known, and leaves residual code, in A-normal form, for
 * the rest. Concretely:
 * <ul>
 *   <li>operator calls on constant arguments are run by the operators' reference kernels;
 *   <li>{@code if} on a known condition and {@code match} on a known constructor take their branch;
 *       tuples and ADT values are tracked field by field, so projections and matches see through them;
 *   <li>calls of known functions (globals, closures) are unfolded with their arguments' partial
 *       values, which unrolls loops whose trip count is static ({@code @loop(0, %acc)} with a
 *       constant bound, a {@code Nat} counter, list map/fold over a static list); recursion stops
 *       where its control depends on dynamic data, at repeated arguments, or when fuel runs out
 *       (see {@link PartialEvaluator});
 *   <li>references: {@code ref}/{@code ref_read}/{@code ref_write} on cells allocated here are
 *       simulated in a store, forgotten at unknown calls and reconciled at joins; a cell that is
 *       only ever written vanishes with its writes;
 *   <li>effects (calls of unknown functions, writes, reads of unknown cells) keep their order; pure
 *       bindings left unused are removed ({@link ResidualBlock}).
 * </ul>
 *
 * <pre>
 * def @main(%x) { let %r = ref(1f); ref_write(%r, 2f); let %t = (ref_read(%r), %x); add(%t.0, %t.1) }
 *   ==>  def @main(%x) { add(2f, %x) }
 * </pre>
 *
 * Not done: specialising a residual function for the static arguments of a call it could not
 * unfold (a call either unfolds fully or stays a call of the original); values flowing out of a
 * residual branch are dynamic even when both branches agree; fused (Primitive) functions are called,
 * never unfolded. A global whose evaluation reproduces it exactly is returned as the same object.
 */
public final class PartialEvaluate implements Pass {
    private static final PassInfo INFO = new PassInfo("partial-evaluate", 1,
            "evaluates what is statically known (folds, unfolds known calls, unrolls static loops, simulates refs); ANF output");

    /**
     * Limits that make evaluation terminate and stay small: at most {@code maxUnfolds} unfolded calls
     * per global, at most {@code maxRecursiveUnfolds} nested unfoldings of one function (the longest
     * loop unrolled), and no unfolding inside more than {@code maxDynamicDepth} nested residual
     * branches or function bodies.
     */
    public record Options(int maxUnfolds, int maxRecursiveUnfolds, int maxDynamicDepth) {
        public static final Options DEFAULT = new Options(10_000, 1_000, 100);

        public Options {
            if (maxUnfolds < 0 || maxRecursiveUnfolds < 0 || maxDynamicDepth < 0) {
                throw new IllegalArgumentException("partial-evaluate limits must be >= 0: " + maxUnfolds + ", " + maxRecursiveUnfolds + ", " + maxDynamicDepth);
            }
        }
    }

    private final Options options;

    public PartialEvaluate() {
        this(Options.DEFAULT);
    }

    public PartialEvaluate(Options options) {
        this.options = options;
    }

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        PartialEvaluator evaluator = new PartialEvaluator(module, options);
        return PassResult.of(module, FunctionPass.mapFunctions(module, (g, f) -> {
            Function residual = evaluator.evaluateGlobal(g, f);
            // The evaluator rebuilds what it walks: an equal residual is "no change".
            return StructuralEquality.equal(residual, f) ? f : residual;
        }));
    }
}
