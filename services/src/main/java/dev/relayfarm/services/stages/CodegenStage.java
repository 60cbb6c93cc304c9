package dev.relayfarm.services.stages;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.artifact.ArtifactArchive;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.vm.VmArtifact;
import dev.relayfarm.services.kit.ChosenSchedule;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.JobOptions;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.kit.TunedPayload;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.PgBlobStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.springframework.stereotype.Component;

/**
 * ir.tuned → artifact.built: {@link Stages#codegen} with the stored schedules the autotuner chose (or, for a module
 * the graph executor cannot run, {@link Stages#codegenVm}: a VM artifact, manifest {@code "executor": "vm"}), into
 * {@code <relayfarm.work-dir>/artifacts/<job id>}; the directory's tar.gz goes to the blob store, and the
 * kit records the artifacts row and marks the job SUCCEEDED. The model's kernels, steps, source and arena, and the C
 * compiler's run time, are bounded by {@code relayfarm.limits} ({@link LimitsProperties#compileLimits}).
 */
@Component
@ServiceRole("codegen")
public class CodegenStage implements StageHandler {
    private final IrStore ir;
    private final PgBlobStore blobs;
    private final Path workDir;
    private final LimitsProperties limits;

    public CodegenStage(IrStore ir, PgBlobStore blobs, WorkDirProperties files, LimitsProperties limits) {
        this.ir = ir;
        this.blobs = blobs;
        this.workDir = files.workDir();
        this.limits = limits;
    }

    @Override
    public Stage stage() {
        return Stage.CODEGEN;
    }

    @Override
    public StageOutput run(StageInput in) throws IOException {
        JobOptions options = in.options();
        Target target = Target.parse(options.target());
        Map<String, ScheduleConfig> configs = new HashMap<>();
        for (ChosenSchedule s : in.payload(TunedPayload.class).schedules()) {
            // defaults need no entry: codegen falls back to them by itself
            if (s.source() != ChosenSchedule.Source.DEFAULT) configs.put(s.workload(), s.config());
        }
        Path dir = workDir.resolve("artifacts").resolve(in.job().id().toString());
        clean(dir); // a retry or redelivery starts from an empty directory
        IRModule module = ir.read(in.irRef());
        CompileOptions compile = new CompileOptions(target, options.optLevel(), configs, limits.compileLimits());
        String contentHash;
        JsonNode manifest;
        if (Stages.executor(module) == Stages.Executor.VM) {
            VmArtifact.Written w = Stages.codegenVm(module, compile, dir);
            contentHash = w.manifest().contentHash();
            manifest = Envelopes.MAPPER.readTree(w.manifest().toJson());
        } else {
            contentHash = Stages.codegen(module, compile, dir).contentHash();
            manifest = Manifest.read(dir).toTree();
        }
        byte[] tar = ArtifactArchive.pack(dir);
        String tarSha = blobs.put(tar);
        return StageOutput.built(in.irRef(), new StageOutput.BuiltArtifact(contentHash, tarSha, tar.length, manifest));
    }

    private static void clean(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
