package dev.relayfarm.services.stages;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ArtifactArchive;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.PgBlobStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * ir.tuned → artifact.built: {@link Stages#codegen} with the stored schedules the autotuner chose, into
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

    public CodegenStage(IrStore ir, PgBlobStore blobs, @Value("${relayfarm.work-dir:${java.io.tmpdir}/relayfarm}") Path workDir, LimitsProperties limits) {
        this.ir = ir;
        this.blobs = blobs;
        this.workDir = workDir;
        this.limits = limits;
    }

    @Override
    public Stage stage() {
        return Stage.CODEGEN;
    }

    @Override
    public StageOutput run(StageInput in) throws IOException {
        JsonNode options = in.options();
        Target target = Target.parse(options.path("target").asText(CompileRequest.DEFAULT_TARGET));
        Map<String, ScheduleConfig> configs = new HashMap<>();
        for (JsonNode s : in.envelope().payload().path("schedules")) {
            // defaults need no entry: codegen falls back to them by itself
            if ("stored".equals(s.path("source").asText())) configs.put(s.path("workload").asText(), ScheduleConfig.fromJson(s.path("config").toString()));
        }
        Path dir = workDir.resolve("artifacts").resolve(in.job().id().toString());
        clean(dir); // a retry or redelivery starts from an empty directory
        ArtifactCompiler.Artifact a = Stages.codegen(ir.read(in.irRef()), new CompileOptions(target, options.path("optLevel").asInt(CompileRequest.DEFAULT_OPT_LEVEL), configs, limits.compileLimits()), dir);
        byte[] tar = ArtifactArchive.pack(dir);
        String tarSha = blobs.put(tar);
        JsonNode manifest = Envelopes.MAPPER.readTree(dir.resolve("manifest.json").toFile());
        ObjectNode payload = Envelopes.MAPPER.createObjectNode();
        payload.put("contentHash", a.contentHash());
        payload.put("tarSha256", tarSha);
        payload.put("sizeBytes", (long) tar.length);
        return new StageOutput(in.irRef(), payload, Optional.of(new StageOutput.BuiltArtifact(a.contentHash(), tarSha, tar.length, manifest)));
    }

    private static void clean(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
