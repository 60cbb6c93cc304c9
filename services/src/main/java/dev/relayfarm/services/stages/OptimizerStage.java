package dev.relayfarm.services.stages;

import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import org.springframework.stereotype.Component;

/** ir.typed → ir.optimized: {@link Stages#optimize} at the job's opt level (fused Primitive functions from -O1 on). */
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
        int level = in.options().path("optLevel").asInt(CompileRequest.DEFAULT_OPT_LEVEL);
        return StageOutput.of(ir.write(Stages.optimize(ir.read(in.irRef()), level)), in.forwardPayload());
    }
}
