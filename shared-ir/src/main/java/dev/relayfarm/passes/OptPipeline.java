package dev.relayfarm.passes;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import java.util.List;
import java.util.Set;

/**
 * The standard optimization pipeline, in the order the passes must run; each pass's own opt level
 * decides whether {@code -O<n>} runs it (-O0 nothing; -O1 what the graph executor needs: loops of
 * static trip count unrolled, cheap ifs converted to selects, empty tensors folded, fusion; -O2 +
 * constant folding; -O3 the rest). The order follows TVM's build pipeline: control flow to dataflow
 * and simplification first, layout next, fusion last.
 */
public final class OptPipeline {
    /** Pass names in pipeline order. */
    public static final List<String> ORDER = List.of("unroll-loops", "if-conversion", "simplify-inference", "dynamic-to-static", "eliminate-common-subexpr",
            "combine-parallel-conv2d", "fold-constant", "fold-scale-axis", "simplify-expr",
            "pad-channel-groups", "canonicalize-ops", "alter-op-layout", "winograd-conv2d", "fold-constant", "fold-empty", "fuse-ops");

    private OptPipeline() {}

    public static Sequential build() {
        return PassRegistry.sequential("opt-pipeline", ORDER);
    }

    /** {@code module} optimized at {@code -O<level>} for {@code target}: the standard pipeline with default options. */
    public static IRModule optimize(IRModule module, int level, Target target) {
        return optimize(module, level, target, Set.of());
    }

    /** The same without the passes named in {@code disabled} (e.g. {@code winograd-conv2d}). */
    public static IRModule optimize(IRModule module, int level, Target target, Set<String> disabled) {
        return build().run(module, new PassContext(options(level, disabled).withTarget(target))).module();
    }

    /** {@link #optimize(IRModule, int, Target)} for the machine we run on ({@link Target#host()}). */
    public static IRModule optimize(IRModule module, int level) {
        return optimize(module, level, Target.host());
    }

    /** Options for {@code -O<level>} with the named passes disabled. */
    public static PassOptions options(int level, Set<String> disabled) {
        return PassOptions.level(level).withDisabled(disabled);
    }
}
