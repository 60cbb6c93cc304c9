package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Unrolls loops whose trip count is static, so that a model whose ONNX {@code Loop}/{@code Scan} the
 * importer turned into a tail-recursive local function becomes plain dataflow the graph executor runs.
 * Only globals that contain a function literal (other than a fused Primitive one) or call a non-Primitive
 * global are touched; each is partially evaluated ({@link PartialEvaluator}) with its parameters dynamic,
 * and the result is kept only when it is <em>all</em> dataflow again: no function literal and no call of
 * a global is left, it has at most {@link Options#maxNodes} nodes, and no loop needed more than
 * {@link Options#maxIterations} iterations. Otherwise the global stays exactly as it was (never
 * half-unrolled). The kept body is put back into graph normal form (the partial evaluator emits
 * A-normal form), so fusion sees one dataflow graph, and its result type is inferred anew (a {@code ?}
 * dimension of a scan output grown by concatenation is static once unrolled).
 *
 * <pre>
 * def @main(%x: float32) -> float32 {
 *   let %loop = fn (%i: int32, %acc: float32) -> float32 {
 *     if (less(%i, 2)) { %loop(add(%i, 1), multiply(%acc, 2f)) } else { %acc }
 *   };
 *   %loop(0, %x)
 * }
 *   ==>
 * def @main(%x: float32) -> float32 { multiply(multiply(%x, 2f), 2f) }
 * </pre>
 *
 * Besides unrolling, the partial evaluator folds what is constant in those globals (as fold-constant
 * would). Not done: a loop whose exit test depends on the inputs' values (it stays a closure, and the
 * graph executor rejects it; that needs the VM), partial unrolling, loops in globals without closures
 * (nothing to do there). Runs from {@code -O1}, first in {@link OptPipeline#ORDER}.
 */
public final class UnrollLoops implements Pass {
    private static final PassInfo INFO = new PassInfo("unroll-loops", 1,
            "unrolls loops (recursive local functions) with a static trip count into dataflow; all or nothing per global");

    /**
     * Bounds: a loop runs at most {@code maxIterations} times at compile time, and unrolling adds at
     * most {@code maxNodes} expression nodes to a global; past either, the global is left as it was.
     */
    public record Options(int maxIterations, int maxNodes) {
        public static final Options DEFAULT = new Options(64, 50_000);

        public Options {
            if (maxIterations < 1 || maxNodes < 1) throw new IllegalArgumentException("unroll-loops limits must be >= 1: " + maxIterations + ", " + maxNodes);
        }
    }

    private final Options options;

    public UnrollLoops() {
        this(Options.DEFAULT);
    }

    public UnrollLoops(Options options) {
        this.options = options;
    }

    @Override
    public PassInfo info() {
        return INFO;
    }

    @Override
    public PassResult run(IRModule module, PassContext context) {
        Map<GlobalVar, Function> unrolled = new LinkedHashMap<>();
        PartialEvaluator evaluator = null;
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            Function f = e.getValue();
            if (f.isPrimitive() || !hasLoopOrCall(module, f.body())) continue;
            if (evaluator == null) evaluator = new PartialEvaluator(module, evaluatorOptions());
            Function residual;
            try {
                residual = evaluator.evaluateGlobal(e.getKey(), f);
            } catch (RuntimeException ex) {
                // E.g. an operator kernel rejecting a folded call: leave this global to the later passes.
                continue;
            }
            // the bound is on what unrolling adds, so a large model with one small loop still unrolls it
            if (residual == f || hasLoopOrCall(module, residual.body())
                    || ExprTraversal.countNodes(residual) - ExprTraversal.countNodes(f) > options.maxNodes()) continue;
            if (StructuralEquality.equal(residual, f)) continue;
            unrolled.put(e.getKey(), residual);
        }
        if (unrolled.isEmpty()) return PassResult.unchanged(module);
        IRModule out = module;
        for (Map.Entry<GlobalVar, Function> e : unrolled.entrySet()) out = out.withFunction(e.getKey(), e.getValue());
        Purity purity = Purity.of(out);
        for (Map.Entry<GlobalVar, Function> e : unrolled.entrySet()) {
            Function f = e.getValue();
            // The result type is left to inference: a dimension the loop made dynamic ("?", e.g. a
            // scan output grown by concatenation) is static once the loop is unrolled.
            out = out.withFunction(e.getKey(), new Function(f.params(), ToGraphNormalForm.rewrite(f.body(), purity), null,
                    f.typeParams(), f.attrs(), f.span()));
        }
        return new PassResult(out, true);
    }

    /**
     * The partial evaluator's fuel: an unrolled loop of {@code n} iterations unfolds its function
     * {@code n + 1} times (the last call takes the exit branch).
     */
    private PartialEvaluate.Options evaluatorOptions() {
        int nested = options.maxIterations() + 1;
        return new PartialEvaluate.Options(Math.max(PartialEvaluate.Options.DEFAULT.maxUnfolds(), nested), nested,
                PartialEvaluate.Options.DEFAULT.maxDynamicDepth());
    }

    /** Whether {@code body} holds a non-Primitive function literal or calls a non-Primitive global (what unrolling removes). */
    private static boolean hasLoopOrCall(IRModule module, Expr body) {
        for (Expr e : ExprTraversal.postOrder(body)) {
            if (e instanceof Function fn && !fn.isPrimitive()) return true;
            if (e instanceof GlobalVar g && module.functions().containsKey(g) && !module.functions().get(g).isPrimitive()) return true;
        }
        return false;
    }
}
