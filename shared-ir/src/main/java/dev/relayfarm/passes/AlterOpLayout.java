package dev.relayfarm.passes;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;

/**
 * Lets the target choose operator layouts (TVM's {@code AlterOpLayout}): each call whose operator
 * has an {@link AlterLayoutHook} is replaced by what the hook builds, its arguments transformed to
 * the layouts it wants; values stay in the new layout through element-wise ops and into the next
 * altered call, and go back to the original layout before any other consumer (see
 * {@link LayoutRewriter}). The registered instance uses the CPU hooks ({@link CpuLayoutHooks}) of the
 * target in the pass options: NCHW convolutions become {@code nn.contrib_conv2d_NCHWc} on the target's
 * channel blocks.
 * <pre>
 * %1 = nn.conv2d(%x, %w1);  %2 = nn.relu(%1);  %3 = nn.conv2d(%2, %w2);  nn.batch_flatten(%3)
 *   ==>  %1 = nn.contrib_conv2d_NCHWc(layout_transform(%x, "NCHW", "NCHW16c"),
 *                                     layout_transform(%w1, "OIHW", "OIHW16i16o"), ...);
 *        %2 = nn.relu(%1);                                    (stays NCHW16c)
 *        %3 = nn.contrib_conv2d_NCHWc(%2, layout_transform(%w2, "OIHW", "OIHW16i16o"), ...);
 *        nn.batch_flatten(layout_transform(%3, "NCHW16c", "NCHW"))
 * </pre>
 * A constant weight's transform is left for fold-constant (which runs after this pass at -O2 and up)
 * to pre-pack. Not done: calls the hooks decline (grouped convolutions, channels without a block
 * size that divides them, dynamic shapes) keep their layout; see {@link LayoutRewriter} for where
 * values go back to the original layout.
 */
public final class AlterOpLayout extends FunctionPass {
    private static final PassInfo INFO = new PassInfo("alter-op-layout", 3,
            "replaces operators by the target's layout-specific versions (CPU: conv2d -> contrib_conv2d_NCHWc)");

    /** The hooks for the target compiled for ({@link PassOptions#target()}) and the function being rewritten (with its types). */
    public record Options(HooksFor hooksFor) {
        /** These hooks whatever the target and function. */
        public Options(AlterLayoutHooks hooks) {
            this((target, function, types) -> hooks);
        }

        public static Options defaults() {
            return new Options(CpuLayoutHooks::forFunction);
        }
    }

    /** A target's hooks, which may look at the whole function first (to agree on blocks between convolutions). */
    @FunctionalInterface
    public interface HooksFor {
        AlterLayoutHooks hooks(Target target, Function function, dev.relayfarm.types.InferResult types);
    }

    private final Options options;

    public AlterOpLayout() {
        this(Options.defaults());
    }

    public AlterOpLayout(Options options) {
        super(INFO);
        this.options = options;
    }

    @Override
    protected Function transform(GlobalVar global, Function function, IRModule module, PassContext context) {
        AlterLayoutHooks hooks = options.hooksFor().hooks(context.options().target(), function, context.types());
        return (Function) new LayoutRewriter(hooks.byOp(), context.types()).rewrite(function);
    }
}
