package dev.relayfarm.passes;

import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.WellFormed;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeException;
import java.util.List;

/**
 * Runs passes in order. Before the first pass the module is typed; after each pass that reports a
 * change it is re-typed (incrementally, see {@link PassContext#typesOf}), so an ill-typed result is
 * caught at the pass that produced it. Passes the options do not enable are skipped. Each run is
 * recorded (time, node counts); named passes have their input/output dumped; with
 * {@code validate} the output's scoping and the pass's "changed" answer are checked.
 *
 * <p>Built once, then frozen: required passes are resolved when the pipeline is built
 * ({@link PassRegistry#sequential}), not re-run before every pass.
 */
public final class Sequential implements Pass {
    private final PassInfo info;
    private final List<Pass> passes;

    public Sequential(String name, List<Pass> passes) {
        this.info = new PassInfo(name, 0, "runs " + passes.stream().map(Pass::name).toList());
        this.passes = List.copyOf(passes);
    }

    @Override
    public PassInfo info() {
        return info;
    }

    public List<Pass> passes() {
        return passes;
    }

    @Override
    public PassResult run(IRModule input, PassContext context) {
        PassOptions options = context.options();
        IRModule module = context.typesOf(input).module();
        boolean changed = false;
        for (Pass pass : passes) {
            if (!options.enabled(pass.info())) continue;
            String name = pass.name();
            if (options.dumpBefore().contains(name)) context.dump(dump("before " + name, module, context.types()));
            int nodesBefore = ExprTraversal.countNodes(module);
            long t0 = System.nanoTime();
            PassResult result;
            try {
                result = pass.run(module, context);
            } catch (PassException | TypeException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new PassException("pass " + name + " failed: " + e, e);
            }
            long t1 = System.nanoTime();
            if (options.validate() && result.changed() != (result.module() != module)) {
                throw new PassException("pass " + name + " answered changed=" + result.changed() + " but returned "
                        + (result.module() == module ? "its input" : "a new module"));
            }
            if (result.changed()) {
                changed = true;
                try {
                    module = context.typesOf(result.module()).module();
                } catch (TypeException e) {
                    throw new PassException("pass " + name + " produced an ill-typed module: " + e.getMessage(), e);
                }
                if (options.validate()) {
                    List<String> problems = WellFormed.problems(module);
                    if (!problems.isEmpty()) throw new PassException("pass " + name + " produced an ill-formed module: " + problems);
                }
            }
            long t2 = System.nanoTime();
            context.record(new PassRecord(name, t1 - t0, t2 - t1, nodesBefore,
                    result.changed() ? ExprTraversal.countNodes(module) : nodesBefore, result.changed()));
            if (options.dumpAfter().contains(name)) context.dump(dump("after " + name, module, context.types()));
        }
        // Typing alone (filling in missing signatures) is not a change: the input is returned then.
        return changed ? new PassResult(module, true) : PassResult.unchanged(input);
    }

    private static String dump(String header, IRModule module, InferResult types) {
        return "// " + header + "\n" + RelayPrinter.print(module, RelayPrinter.Options.withTypes(types.types()));
    }
}
