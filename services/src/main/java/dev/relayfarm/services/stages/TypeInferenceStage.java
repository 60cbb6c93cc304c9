package dev.relayfarm.services.stages;

import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import org.springframework.stereotype.Component;

/** ir.imported → ir.typed: {@link Stages#inferTypes} (an ill-typed model fails the job here, with the checker's diagnostics). */
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
        return StageOutput.of(ir.write(Stages.inferTypes(ir.read(in.irRef()))), in.forwardPayload());
    }
}
