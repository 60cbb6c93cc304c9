package dev.relayfarm.services.stages;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.JobModel;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.PgBlobStore;
import org.springframework.stereotype.Component;

/**
 * compile.requested → ir.imported: the uploaded model (a blob) through {@link Stages#importModel}, its tensors
 * checked against {@code relayfarm.limits} ({@link LimitsProperties#importLimits}).
 */
@Component
@ServiceRole("importer")
public class ImporterStage implements StageHandler {
    private final PgBlobStore blobs;
    private final IrStore ir;
    private final LimitsProperties limits;

    public ImporterStage(PgBlobStore blobs, IrStore ir, LimitsProperties limits) {
        this.blobs = blobs;
        this.ir = ir;
        this.limits = limits;
    }

    @Override
    public Stage stage() {
        return Stage.IMPORTER;
    }

    @Override
    public StageOutput run(StageInput in) {
        JobModel model = in.model();
        ModelSource source = ModelSource.of(model.name(), ModelFormat.of(model.format()), blobs.get(model.sha256()));
        IRModule module = Stages.importModel(source, in.options().shapes(), limits.importLimits());
        return StageOutput.of(ir.write(module), in.forwardPayload());
    }
}
