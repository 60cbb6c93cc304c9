package dev.relayfarm.services.stages;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import org.springframework.stereotype.Component;

/**
 * ir.imported → ir.typed: {@link Stages#inferTypes} (an ill-typed model fails the job here, with the checker's
 * diagnostics), then {@link Stages#executor}: a model without {@code @main} fails here too, not after optimization
 * and tuning; one the graph executor cannot run (control flow, recursion, ADTs) goes on for the Relay VM.
 */
@Component
@ServiceRole("type-inference")
public class TypeInferenceStage implements StageHandler {
    private final IrStore ir;

    public TypeInferenceStage(IrStore ir) {
        this.ir = ir;
    }

    @Override
    public Stage stage() {
        return Stage.TYPE_INFERENCE;
    }

    @Override
    public StageOutput run(StageInput in) {
        IRModule typed = Stages.inferTypes(ir.read(in.irRef()));
        // a model the graph executor cannot run goes on to the VM; only one without @main fails here
        Stages.executor(typed);
        return StageOutput.of(ir.write(typed), in.forwardPayload());
    }
}
