package dev.relayfarm.services.stages;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.relayfarm.artifact.ArtifactArchive;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.FarmTestInfra;
import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.TestJobs;
import dev.relayfarm.services.TopicReader;
import dev.relayfarm.services.kit.ArtifactPayload;
import dev.relayfarm.services.kit.Envelope;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.JobModel;
import dev.relayfarm.services.kit.JobPayload;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.ArtifactStore;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.NewJob;
import dev.relayfarm.services.store.PgBlobStore;
import dev.relayfarm.tuning.TuningTask;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The five stage services over a real Kafka broker and a real PostgreSQL, jobs submitted as the gateway
 * submits them. Checks the whole chain (artifact row, tarball, artifact.built), idempotent redelivery,
 * user errors failing at once with the stage's message, poison messages going to the DLQ after the
 * configured attempts, stored schedules applied, the messages against their JSON Schemas, and one trace
 * per job.
 */
@SpringBootTest(classes = {RelayFarmServices.class, StagePipelineTest.Tracing.class}, webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {"relayfarm.roles=importer,type-inference,optimizer,autotuner,codegen", "relayfarm.stage.max-attempts=3",
                "relayfarm.stage.backoff=50ms", "relayfarm.stage.shutdown-timeout=10s", "logging.level.org.apache.kafka=WARN",
                "logging.level.kafka=WARN", "logging.level.org.apache.zookeeper=WARN"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StagePipelineTest {
    static final Path EXAMPLES = Path.of("..", "examples");
    static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    static final Path workDir = tempDir();

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("relayfarm-stages-test");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void infra(DynamicPropertyRegistry r) {
        FarmTestInfra.register(r);
        r.add("relayfarm.work-dir", () -> workDir.toString());
    }

    /** Spans go to memory, where the trace test reads them. */
    @TestConfiguration
    static class Tracing {
        @Bean
        @Primary
        OpenTelemetry testOpenTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                    .build();
        }
    }

    @Autowired JdbcTemplate jdbc;
    @Autowired PgBlobStore blobs;
    @Autowired JobStore jobs;
    @Autowired ArtifactStore artifacts;
    @Autowired KafkaTemplate<String, String> kafka;
    @Autowired OpenTelemetry otel;
    TestJobs submit;
    byte[] mlp;

    @BeforeAll
    void setUp() throws Exception {
        submit = new TestJobs(blobs, jobs, kafka, otel);
        mlp = Files.readAllBytes(EXAMPLES.resolve("mlp.relay"));
    }

    private TestJobs.Submitted relayJob(byte[] model) throws Exception {
        return submit.submit("mlp.relay", "relay", model, "c -mcpu=native", 3, "");
    }

    @Test
    void aRelayModelBecomesAnArtifactInOneTrace() throws Exception {
        TestJobs.Submitted job = relayJob(mlp);
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT), () -> jobs.find(job.id()).toString());

        var artifact = artifacts.forJob(job.id()).orElseThrow();
        assertEquals(1, artifacts.countForJob(job.id()));
        assertEquals(artifact.contentHash(), artifact.manifest().get("content_hash").asText());
        byte[] tar = blobs.get(artifact.tarSha256());
        assertEquals(tar.length, artifact.sizeBytes());
        Path unpacked = workDir.resolve("unpacked-" + job.id());
        ArtifactArchive.unpack(new ByteArrayInputStream(tar), unpacked);
        assertTrue(Files.isRegularFile(unpacked.resolve("lib.so")));
        assertEquals(Envelopes.MAPPER.readTree(unpacked.resolve("manifest.json").toFile()), artifact.manifest());

        List<String> stages = jobs.stageTimings(job.id()).stream().map(JobStore.StageTiming::stage).toList();
        assertEquals(List.of("import", "infer", "optimize", "tune", "codegen"), stages);
        List<String> kinds = jobs.events(job.id()).stream().map(e -> e.kind() + (e.stage() == null ? "" : ":" + e.stage())).toList();
        assertEquals(List.of("QUEUED", "STARTED:import", "FINISHED:import", "STARTED:infer", "FINISHED:infer", "STARTED:optimize", "FINISHED:optimize",
                "STARTED:tune", "FINISHED:tune", "STARTED:codegen", "FINISHED:codegen", "SUCCEEDED:codegen"), kinds);

        List<ConsumerRecord<String, String>> built = TopicReader.readJob(Stage.CODEGEN.outputTopic, job.id());
        assertEquals(1, built.size());
        Envelope out = Envelopes.read(built.getFirst().value());
        assertEquals(artifact.id(), ((ArtifactPayload) out.payload()).artifactId());
        assertEquals(artifact.tarSha256(), ((ArtifactPayload) out.payload()).tarSha256());

        // the IR travelled by reference: every envelope is small, the IR documents are blobs
        for (Stage s : Stage.values()) {
            for (ConsumerRecord<String, String> r : TopicReader.readJob(s.outputTopic, job.id())) {
                assertTrue(r.value().length() < 8_000, s.outputTopic + " record of " + r.value().length() + " chars");
                Envelope e = Envelopes.read(r.value());
                if (s != Stage.CODEGEN) assertTrue(blobs.contains(e.irRef()), s + " irRef stored");
            }
        }

        // one trace: the gateway's root span and a span per stage, all with the trace id the job row keeps
        TestJobs.await(() -> stageSpans(job.id()).size() >= 5, Duration.ofSeconds(10), "5 stage spans");
        List<SpanData> spans = stageSpans(job.id());
        assertEquals(5, spans.size(), spans::toString);
        for (SpanData s : spans) {
            assertEquals(job.traceId(), s.getTraceId(), s.getName());
            assertEquals("mlp.relay", s.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("relayfarm.model.name")));
            assertEquals("c -mcpu=native", s.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("relayfarm.target")));
        }
        assertEquals(List.of("import", "infer", "optimize", "tune", "codegen"),
                spans.stream().sorted(java.util.Comparator.comparingLong(SpanData::getStartEpochNanos))
                        .map(s -> s.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("relayfarm.stage"))).toList());
        assertEquals(job.traceId(), jdbc.queryForObject("SELECT trace_id FROM jobs WHERE id = ?", String.class, job.id()));
    }

    private static List<SpanData> stageSpans(UUID job) {
        return SPANS.getFinishedSpanItems().stream()
                .filter(s -> job.toString().equals(s.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("relayfarm.job.id")))).toList();
    }

    @Test
    void anOnnxModelCompilesWhenTheSharedModelsArePresent() throws Exception {
        Optional<Path> mnist = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile);
        Assumptions.assumeTrue(mnist.isPresent(), "../shared/onnx/models/mnist8_cntk/model.onnx not found: skipped");
        TestJobs.Submitted job = submit.submit("mnist8_cntk.onnx", "onnx", Files.readAllBytes(mnist.get()), "c -mcpu=native", 3, "");
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT), () -> jobs.find(job.id()).toString());
        var artifact = artifacts.forJob(job.id()).orElseThrow();
        assertEquals(List.of(1, 1, 28, 28), Envelopes.MAPPER.convertValue(artifact.manifest().get("inputs").get(0).get("shape"), List.class));
        // the weights were claim-checked: the imported IR document is far smaller than the model
        Envelope imported = Envelopes.read(TopicReader.readJob(Stage.IMPORTER.outputTopic, job.id()).getFirst().value());
        assertTrue(blobs.get(imported.irRef()).length < Files.size(mnist.get()), "IR document holds weights by reference");
    }

    /** quantize=int8: the optimizer stage quantizes mnist8 before its pipeline; the artifact carries int8 weights and answers like float. */
    @Test
    void anInt8JobQuantizesBeforeOptimizing() throws Exception {
        Optional<Path> mnist = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile);
        Assumptions.assumeTrue(mnist.isPresent(), "../shared/onnx/models/mnist8_cntk/model.onnx not found: skipped");
        TestJobs.Submitted job = submit.submit("mnist8.onnx", "onnx", Files.readAllBytes(mnist.get()), "c -mcpu=native", 3, "", "int8");
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT), () -> jobs.find(job.id()).toString());
        assertEquals("int8", jobs.find(job.id()).orElseThrow().quantize());
        var artifact = artifacts.forJob(job.id()).orElseThrow();
        List<String> dtypes = new java.util.ArrayList<>();
        artifact.manifest().get("params").get("tensors").forEach(t -> dtypes.add(t.get("dtype").asText()));
        assertTrue(dtypes.contains("int8"), "int8 weights among the params: " + dtypes);
    }

    @Test
    void aRedeliveredMessageIsANoOp() throws Exception {
        TestJobs.Submitted job = relayJob(mlp);
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
        int events = jobs.events(job.id()).size();
        Envelope tuned = Envelopes.read(TopicReader.readJob(Stage.AUTOTUNER.outputTopic, job.id()).getFirst().value());
        // the first message again, and the codegen input again
        submit.send(Stage.IMPORTER.inputTopic, job.request());
        submit.send(Stage.CODEGEN.inputTopic, tuned);
        // each stage re-sends its stored output: wait for the redelivered chain to reach artifact.built again
        TestJobs.await(() -> TopicReader.readJob(Stage.CODEGEN.outputTopic, job.id()).size() >= 3, JOB_TIMEOUT, "re-sent artifact.built");
        assertEquals(1, artifacts.countForJob(job.id()));
        assertEquals(5, jobs.stageTimings(job.id()).size());
        assertEquals(events, jobs.events(job.id()).size(), "no new events");
        assertEquals(JobStatus.SUCCEEDED, jobs.status(job.id()).orElseThrow());
        // every re-send is the stored output itself (same fields; JSONB does not keep the key order)
        List<Envelope> built = TopicReader.readJob(Stage.CODEGEN.outputTopic, job.id()).stream().map(r -> Envelopes.read(r.value())).distinct().toList();
        assertEquals(1, built.size(), built::toString);
    }

    @Test
    void aBadModelFailsAtImportWithTheImportersMessage() throws Exception {
        TestJobs.Submitted job = submit.submit("broken.onnx", "onnx", "this is not protobuf".getBytes(StandardCharsets.UTF_8), "c -mcpu=native", 3, "");
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
        JobRow row = jobs.find(job.id()).orElseThrow();
        assertEquals("import", row.errorStage());
        assertTrue(row.errorMessage().startsWith("broken.onnx: not a valid ONNX model"), row.errorMessage());
        assertEquals("onnx-malformed", row.errorCode(), "the importer's diagnostic code goes with the message");
        List<JobEvent> events = jobs.events(job.id());
        assertTrue(events.stream().noneMatch(e -> e.kind().equals("RETRY")), "a user error is not retried");
        assertEquals("FAILED", events.getLast().kind());
        assertEquals(row.errorMessage(), events.getLast().message());
        assertTrue(TopicReader.readJob(Stage.IMPORTER.outputTopic, job.id()).isEmpty());
        assertTrue(TopicReader.readJob(Stage.IMPORTER.dlqTopic(), job.id()).isEmpty(), "user errors are not dead letters");
        // the event stream saw it too
        TestJobs.await(() -> TopicReader.readJob(Stage.JOB_EVENTS_TOPIC, job.id()).stream().anyMatch(r -> r.value().contains("\"FAILED\"")),
                Duration.ofSeconds(10), "FAILED on job.events");
    }

    @Test
    void aTypeErrorFailsAtInfer() throws Exception {
        String text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) {\n  add(%x, %y)\n}\n";
        TestJobs.Submitted job = submit.submit("bad.relay", "relay", text.getBytes(StandardCharsets.UTF_8), "c -mcpu=native", 3, "");
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
        JobRow row = jobs.find(job.id()).orElseThrow();
        assertEquals("infer", row.errorStage());
        assertTrue(row.errorMessage().contains("bad.relay:3:"), "the diagnostic points at the source: " + row.errorMessage());
        assertNotNull(row.errorCode(), "a type error is a user error with a diagnostic code");
    }

    /** relu over x[N, C, H, W], every dim dynamic: the job's shapes bind them. */
    private static byte[] dynamicReluOnnx() {
        var s = dev.relayfarm.frontend.proto.Onnx.TensorShapeProto.newBuilder();
        for (String d : List.of("N", "C", "H", "W")) s.addDim(dev.relayfarm.frontend.proto.Onnx.TensorShapeProto.Dimension.newBuilder().setDimParam(d));
        var t = dev.relayfarm.frontend.proto.Onnx.TypeProto.newBuilder().setTensorType(dev.relayfarm.frontend.proto.Onnx.TypeProto.Tensor.newBuilder()
                .setElemType(dev.relayfarm.frontend.proto.Onnx.TensorProto.DataType.FLOAT_VALUE).setShape(s)).build();
        var g = dev.relayfarm.frontend.proto.Onnx.GraphProto.newBuilder().setName("g")
                .addInput(dev.relayfarm.frontend.proto.Onnx.ValueInfoProto.newBuilder().setName("x").setType(t))
                .addNode(dev.relayfarm.frontend.proto.Onnx.NodeProto.newBuilder().setOpType("Relu").setName("r").addInput("x").addOutput("y"))
                .addOutput(dev.relayfarm.frontend.proto.Onnx.ValueInfoProto.newBuilder().setName("y").setType(t));
        return dev.relayfarm.frontend.proto.Onnx.ModelProto.newBuilder().setIrVersion(8)
                .addOpsetImport(dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto.newBuilder().setVersion(13)).setGraph(g).build().toByteArray();
    }

    @Test
    void shapesOverTheTensorLimitFailAtImportNamingTheShapesField() throws Exception {
        // issue 13: this once compiled "successfully" into an artifact that wanted a 410 TB arena
        TestJobs.Submitted job = submit.submit("relu.onnx", "onnx", dynamicReluOnnx(), "c -mcpu=native", 3, "x=1x3x99999999x99999");
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
        JobRow row = jobs.find(job.id()).orElseThrow();
        assertEquals("import", row.errorStage());
        assertEquals("shapes: x=1x3x99999999x99999 float32 needs 109.1 TiB (119998798800012 bytes), the limit is 4 GiB per tensor"
                + " (relayfarm.limits.max-tensor-bytes)", row.errorMessage());
        assertTrue(jobs.events(job.id()).stream().noneMatch(e -> e.kind().equals("RETRY")), "a user error is not retried");
        // within the limit the same model compiles
        TestJobs.Submitted ok = submit.submit("relu.onnx", "onnx", dynamicReluOnnx(), "c -mcpu=native", 3, "x=1x3x8x8");
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(ok.id(), JOB_TIMEOUT), () -> jobs.find(ok.id()).toString());
    }

    @Test
    void aModuleWithoutMainFailsAtInfer() throws Exception {
        TestJobs.Submitted empty = relayJob("#[version = \"0.0.5\"]\n".getBytes(StandardCharsets.UTF_8));
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(empty.id(), JOB_TIMEOUT));
        JobRow row = jobs.find(empty.id()).orElseThrow();
        assertEquals("infer", row.errorStage());
        assertEquals("the module has no @main, the function the graph executor runs (the module is empty)", row.errorMessage());
        assertTrue(jobs.stageTimings(empty.id()).stream().noneMatch(t -> t.stage().equals("optimize")), "never optimized");
    }

    /**
     * Control flow and recursion, which the graph executor refuses, become a Relay VM artifact (issue 19): the
     * recursive factorial goes through every stage (the optimizer and the autotuner pass it on: the VM compiler
     * optimizes inside each function, its kernels keep their defaults), its manifest says {@code "executor": "vm"},
     * and the unpacked artifact computes 12! natively.
     */
    @Test
    void aRecursiveModelBecomesAVmArtifact() throws Exception {
        TestJobs.Submitted job = relayJob(Files.readAllBytes(EXAMPLES.resolve("factorial.relay")));
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT), () -> jobs.find(job.id()).toString());
        var artifact = artifacts.forJob(job.id()).orElseThrow();
        assertEquals("vm", artifact.manifest().get("executor").asText());
        assertEquals(artifact.contentHash(), artifact.manifest().get("content_hash").asText());
        assertEquals(List.of("import", "infer", "optimize", "tune", "codegen"), jobs.stageTimings(job.id()).stream().map(JobStore.StageTiming::stage).toList());
        Path unpacked = workDir.resolve("unpacked-" + job.id());
        ArtifactArchive.unpack(new ByteArrayInputStream(blobs.get(artifact.tarSha256())), unpacked);
        assertTrue(Files.isRegularFile(unpacked.resolve("vm.rfx")));
        try (dev.relayfarm.vm.VirtualMachine vm = dev.relayfarm.vm.VmArtifact.load(unpacked)) {
            var result = (dev.relayfarm.vm.VmObject.Tensor) vm.runMain(dev.relayfarm.ir.NDArray.scalar(12));
            assertEquals(479001600, result.toNDArray().getDouble(0));
        }
    }

    @Test
    void aPoisonMessageGoesToTheDlqAfterTheConfiguredAttempts() throws Exception {
        TestJobs.Submitted real = relayJob("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3), float32]) { nn.relu(%x) }\n".getBytes(StandardCharsets.UTF_8));
        submit.awaitTerminal(real.id(), JOB_TIMEOUT);
        // a job whose message names a model blob that does not exist: not the user's fault, so retried, then dead-lettered
        UUID id = UUID.randomUUID();
        String modelSha = ((JobPayload) real.request().payload()).model().sha256();
        jobs.create(new NewJob(id, "x.relay", "relay", modelSha, "c", 3, "", null, null, 0));
        JobPayload original = (JobPayload) real.request().payload();
        var payload = new JobPayload(new JobModel("0".repeat(64), original.model().name(), original.model().format()), original.options());
        Envelope poison = new Envelope(id, "gateway", 1, Envelope.SCHEMA_VERSION, null, payload, null, java.time.Instant.now());
        submit.send(Stage.IMPORTER.inputTopic, poison);
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(id, JOB_TIMEOUT));
        JobRow row = jobs.find(id).orElseThrow();
        assertEquals("import", row.errorStage());
        assertTrue(row.errorMessage().contains("blob " + "0".repeat(64) + " not found"), row.errorMessage());
        assertNull(row.errorCode(), "an internal failure has no user-error code");
        assertEquals(2, jobs.events(id).stream().filter(e -> e.kind().equals("RETRY")).count(), "3 attempts = 2 retries");
        TestJobs.await(() -> !TopicReader.readJob(Stage.IMPORTER.dlqTopic(), id).isEmpty(), Duration.ofSeconds(10), "the dead letter");
        ConsumerRecord<String, String> dead = TopicReader.readJob(Stage.IMPORTER.dlqTopic(), id).getFirst();
        assertEquals(Envelopes.write(poison), dead.value(), "the original message");
        assertEquals("3", new String(dead.headers().lastHeader("relayfarm.attempts").value(), StandardCharsets.UTF_8));

        // an unreadable record has no job to fail: straight to the DLQ
        String key = "garbage-" + UUID.randomUUID();
        submit.sendRaw(Stage.IMPORTER.inputTopic, key, "{not json");
        TestJobs.await(() -> TopicReader.readAll(Stage.IMPORTER.dlqTopic()).stream().anyMatch(r -> key.equals(r.key())), JOB_TIMEOUT, "garbage dead-lettered");
    }

    @Test
    void aCancelledJobIsSkipped() throws Exception {
        UUID id = UUID.randomUUID();
        String sha = blobs.put(mlp);
        jobs.create(new NewJob(id, "mlp.relay", "relay", sha, "c", 3, "", null, null, 0));
        jobs.cancel(id);
        TestJobs.Submitted later = relayJob(mlp);
        Envelope env = new Envelope(id, "gateway", 1, Envelope.SCHEMA_VERSION, null, later.request().payload(), null, java.time.Instant.now());
        submit.send(Stage.IMPORTER.inputTopic, env);
        // one partition-ordered job finishing after ours shows the importer has been past it
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(later.id(), JOB_TIMEOUT));
        Thread.sleep(500);
        assertEquals(JobStatus.CANCELLED, jobs.status(id).orElseThrow());
        assertTrue(jobs.stageTimings(id).isEmpty());
        assertTrue(TopicReader.readJob(Stage.IMPORTER.outputTopic, id).isEmpty());
    }

    @Test
    void theAutotunerAppliesTheBestReviewedStoredSchedule() throws Exception {
        List<TuningTask> ws = Stages.tasks(Stages.optimize(Stages.importModel(ModelSource.read(EXAMPLES.resolve("mlp.relay")), ""), 3), Target.parse("c -mcpu=native"));
        TuningTask dense = ws.stream().filter(w -> w.template().startsWith("dense")).findFirst().orElseThrow();
        TuningTask other = ws.stream().filter(w -> w != dense).findFirst().orElseThrow();
        String target = Target.parse("c -mcpu=native").toString();
        ScheduleConfig tuned = null;
        for (var e : dense.defaultConfig().knobs().entrySet()) {
            if (e.getValue() instanceof Integer v && v > 1) {
                tuned = dense.defaultConfig().with(e.getKey(), 1);
                break;
            }
        }
        assertNotNull(tuned, "a dense knob to change: " + dense.defaultConfig());
        jdbc.update("DELETE FROM schedules WHERE workload_key IN (?, ?) AND target = ?", dense.key(), other.key(), target);
        long approved = jdbc.queryForObject("INSERT INTO schedules (workload_key, target, template, config, cost_us, default_cost_us, status) "
                + "VALUES (?, ?, ?, ?::jsonb, 10, 20, 'APPROVED') RETURNING id", Long.class, dense.key(), target, dense.template(), tuned.toJson());
        // pending: not reviewed yet, must not apply
        jdbc.update("INSERT INTO schedules (workload_key, target, template, config, status) VALUES (?, ?, ?, ?::jsonb, 'PENDING')",
                other.key(), target, other.template(), other.defaultConfig().toJson());
        try {
            TestJobs.Submitted job = relayJob(mlp);
            assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
            Envelope t = Envelopes.read(TopicReader.readJob(Stage.AUTOTUNER.outputTopic, job.id()).getFirst().value());
            Map<String, JsonNode> byKey = new java.util.HashMap<>();
            for (JsonNode s : Envelopes.MAPPER.valueToTree(t.payload()).get("schedules")) byKey.put(s.get("workload").asText(), s);
            assertEquals(ws.size(), byKey.size());
            assertEquals("stored", byKey.get(dense.key()).get("source").asText());
            assertEquals(approved, byKey.get(dense.key()).get("scheduleId").asLong());
            assertEquals("default", byKey.get(other.key()).get("source").asText());
            boolean applied = false;
            for (JsonNode k : artifacts.forJob(job.id()).orElseThrow().manifest().get("kernels")) {
                if (k.get("workload").asText().equals(dense.key())) {
                    assertEquals(tuned, ScheduleConfig.fromJson(k.get("config").toString()));
                    applied = true;
                }
            }
            assertTrue(applied);
            // an approved schedule slower than the default stops applying
            jdbc.update("UPDATE schedules SET cost_us = 30 WHERE id = ?", approved);
            TestJobs.Submitted slower = relayJob(mlp);
            assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(slower.id(), JOB_TIMEOUT));
            Envelope t2 = Envelopes.read(TopicReader.readJob(Stage.AUTOTUNER.outputTopic, slower.id()).getFirst().value());
            for (JsonNode s : Envelopes.MAPPER.valueToTree(t2.payload()).get("schedules")) assertEquals("default", s.get("source").asText(), s.toString());
        } finally {
            jdbc.update("DELETE FROM schedules WHERE workload_key IN (?, ?) AND target = ?", dense.key(), other.key(), target);
        }
    }

    @Test
    void producedMessagesMatchTheirSchemas() throws Exception {
        TestJobs.Submitted job = relayJob(mlp);
        assertEquals(JobStatus.SUCCEEDED, submit.awaitTerminal(job.id(), JOB_TIMEOUT));
        Schema envelope = schema("envelope");
        Map<String, Schema> payloads = Map.of(
                "compile.requested", schema("compile.requested"), "ir.imported", schema("compile.requested"), "ir.typed", schema("compile.requested"),
                "ir.optimized", schema("compile.requested"), "ir.tuned", schema("ir.tuned"), "artifact.built", schema("artifact.built"));
        int checked = 0;
        for (var e : payloads.entrySet()) {
            List<ConsumerRecord<String, String>> records = TopicReader.readJob(e.getKey(), job.id());
            assertFalse(records.isEmpty(), e.getKey());
            for (ConsumerRecord<String, String> r : records) {
                JsonNode value = Envelopes.MAPPER.readTree(r.value());
                assertEquals(List.of(), envelope.validate(value).stream().map(Object::toString).toList(), e.getKey() + " envelope: " + r.value());
                assertEquals(List.of(), e.getValue().validate(value.get("payload")).stream().map(Object::toString).toList(), e.getKey() + " payload: " + r.value());
                assertEquals(new String(r.headers().lastHeader("traceparent").value(), StandardCharsets.UTF_8), value.get("traceparent").asText());
                checked++;
            }
        }
        Schema events = schema("job.events");
        TestJobs.await(() -> TopicReader.readJob(Stage.JOB_EVENTS_TOPIC, job.id()).size() >= 11, Duration.ofSeconds(10), "11 stage events");
        for (ConsumerRecord<String, String> r : TopicReader.readJob(Stage.JOB_EVENTS_TOPIC, job.id())) {
            assertEquals(List.of(), events.validate(Envelopes.MAPPER.readTree(r.value())).stream().map(Object::toString).toList(), r.value());
            checked++;
        }
        assertTrue(checked >= 17, "checked " + checked);
        // the schemas are not vacuous
        JsonNode bad = Envelopes.MAPPER.readTree(TopicReader.readJob("ir.tuned", job.id()).getFirst().value());
        ((com.fasterxml.jackson.databind.node.ObjectNode) bad).put("attempt", 0);
        ((com.fasterxml.jackson.databind.node.ObjectNode) bad.get("payload").get("schedules").get(0)).put("source", "guessed");
        assertFalse(envelope.validate(bad).isEmpty());
        assertFalse(payloads.get("ir.tuned").validate(bad.get("payload")).isEmpty());
    }

    private static Schema schema(String name) throws Exception {
        JsonNode node = Envelopes.MAPPER.readTree(Path.of("..", "schemas", "messages", name + ".schema.json").toFile());
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(node);
    }
}
