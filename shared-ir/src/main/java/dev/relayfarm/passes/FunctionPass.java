package dev.relayfarm.passes;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * A pass that rewrites each global function on its own. Globals marked {@code Primitive} (already
 * lowered kernels) are left alone, as TVM's function passes do.
 */
public abstract class FunctionPass implements Pass {
    private final PassInfo info;

    protected FunctionPass(PassInfo info) {
        this.info = info;
    }

    @Override
    public final PassInfo info() {
        return info;
    }

    /** The rewritten function, or {@code function} itself when nothing changes. */
    protected abstract Function transform(GlobalVar global, Function function, IRModule module, PassContext context);

    @Override
    public final PassResult run(IRModule module, PassContext context) {
        return PassResult.of(module, mapFunctions(module, (g, f) -> transform(g, f, module, context)));
    }

    /**
     * {@code module} with {@code transform} applied to each global function that is not Primitive; the
     * same module object when every call returns its function unchanged (copy-on-write). For passes that
     * first analyse the whole module (purity, a partial evaluator) and then rewrite function by function.
     */
    public static IRModule mapFunctions(IRModule module, BiFunction<GlobalVar, Function, Function> transform) {
        IRModule out = module;
        for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
            if (e.getValue().isPrimitive()) continue;
            Function f = transform.apply(e.getKey(), e.getValue());
            if (f != e.getValue()) out = out.withFunction(e.getKey(), f);
        }
        return out;
    }
}
