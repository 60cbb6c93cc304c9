package dev.relayfarm.ad;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.passes.Sequential;
import java.util.List;
import java.util.Set;

/**
 * What turns a gradient program into ordinary dataflow: partial evaluation runs the backpropagator chain at compile
 * time (the closures, the {@code bp} cell and the adjoint cells are all known, only tensor values are dynamic), dead
 * code elimination drops the adjoints nobody reads, the graph form lets later passes see through the bindings, and the
 * zero adjoints and unit seeds fold away ({@code zeros_like(x) + g -> g}, {@code ones * w -> w}). After it,
 * a first-order model's gradient goes through {@code OptPipeline} and the graph executor like any model.
 */
public final class GradientPipeline {
    public static final List<String> PASSES = List.of("partial-evaluate", "dead-code-elimination", "remove-unused-functions", "to-graph-normal-form",
            "dynamic-to-static", "fold-constant", "simplify-expr", "dead-code-elimination");

    private GradientPipeline() {}

    public static IRModule simplify(IRModule gradient) {
        Sequential seq = PassRegistry.sequential("gradient-simplify", PASSES);
        return seq.run(gradient, new PassContext(PassOptions.level(3).withForced(Set.copyOf(PASSES)))).module();
    }
}
