package dev.relayfarm.services.stages;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.quantize.Precision;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import org.springframework.stereotype.Component;

/**
 * ir.typed → ir.optimized: {@link Stages#optimize} at the job's opt level for its target (fused Primitive functions
 * from -O1 on), after quantizing it when the job asks for int8; a module for the VM ({@link Stages#executor}) is not
 * optimized here, codegen's VM compiler optimizes it.
 */
@Component
@ServiceRole("optimizer")
public class OptimizerStage implements StageHandler {
    private final IrStore ir;

    public OptimizerStage(IrStore ir) {
        this.ir = ir;
    }

    @Override
    public Stage stage() {
        return Stage.OPTIMIZER;
    }

    @Override
    public StageOutput run(StageInput in) {
        int level = in.options().optLevel();
        Target target = Target.parse(in.options().target());
        // int8: quantized before the pipeline (annotate, calibrate on seeded inputs, realize), as relayc compile --quantize int8
        Precision precision = in.options().precision();
        IRModule typed = precision.apply(ir.read(in.irRef()));
        // the VM compiler optimizes inside each function itself, from the typed module (as relayc compile does)
        if (Stages.executor(typed) == Stages.Executor.VM) {
            return StageOutput.of(precision == Precision.FLOAT ? in.irRef() : ir.write(typed), in.forwardPayload());
        }
        return StageOutput.of(ir.write(Stages.optimize(typed, level, target)), in.forwardPayload());
    }
}
