package dev.relayfarm.services.kit;

import dev.relayfarm.services.store.JobStatus;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The pipeline's stages in order, each one Kafka consumer group reading {@link #inputTopic} and writing
 * {@link #outputTopic} (ARCHITECTURE.md sections 2 and 4). A message that keeps failing goes to {@link #dlqTopic}.
 * The farm's topology — every topic name and every service role — is derived from here and nowhere else
 * ({@link #topicNames}, {@link #roles}).
 */
public enum Stage {
    IMPORTER("import", "compile.requested", "ir.imported", JobStatus.IMPORTING),
    TYPE_INFERENCE("infer", "ir.imported", "ir.typed", JobStatus.TYPING),
    OPTIMIZER("optimize", "ir.typed", "ir.optimized", JobStatus.OPTIMIZING),
    AUTOTUNER("tune", "ir.optimized", "ir.tuned", JobStatus.TUNING),
    CODEGEN("codegen", "ir.tuned", "artifact.built", JobStatus.GENERATING);

    /** Status events of every job, for the gateway's event stream. */
    public static final String JOB_EVENTS_TOPIC = "job.events";

    /**
     * The service that takes jobs in: its role name, and the producer ({@link Envelope#stage}) of compile.requested,
     * the first message of a job. A constant, so {@code @ServiceRole(Stage.GATEWAY)} can name it.
     */
    public static final String GATEWAY = "gateway";
    /** The tuning farm's roles (not stages of a job): a tuner worker and a hardware agent. */
    public static final String TUNER_WORKER = "tuner-worker";
    public static final String HARDWARE_AGENT = "hardware-agent";

    /** The name stored in {@code stage_results.stage}, {@code job_events.stage}, {@code jobs.error_stage} and envelopes. */
    public final String wireName;
    public final String inputTopic;
    public final String outputTopic;
    /** The job's status while this stage works on it. */
    public final JobStatus status;

    Stage(String wireName, String inputTopic, String outputTopic, JobStatus status) {
        this.wireName = wireName;
        this.inputTopic = inputTopic;
        this.outputTopic = outputTopic;
        this.status = status;
    }

    /** The service (and Kafka consumer group suffix, and role name) that runs this stage. */
    public String serviceName() {
        return switch (this) {
            case IMPORTER -> "importer";
            case TYPE_INFERENCE -> "type-inference";
            case OPTIMIZER -> "optimizer";
            case AUTOTUNER -> "autotuner";
            case CODEGEN -> "codegen";
        };
    }

    /** The payload record of this stage's output messages (the next stage's input). */
    public Class<? extends Payload> outputPayload() {
        return switch (this) {
            case IMPORTER, TYPE_INFERENCE, OPTIMIZER -> JobPayload.class;
            case AUTOTUNER -> TunedPayload.class;
            case CODEGEN -> ArtifactPayload.class;
        };
    }

    public String consumerGroup() {
        return "relayfarm-" + serviceName();
    }

    public String dlqTopic() {
        return inputTopic + "." + serviceName() + ".dlq";
    }

    /** Every topic name the farm uses: the pipeline's in order, {@link #JOB_EVENTS_TOPIC}, the tuning farm's fixed ones, then the dead letters. */
    public static List<String> topicNames() {
        Set<String> names = new LinkedHashSet<>();
        for (Stage s : values()) {
            names.add(s.inputTopic);
            names.add(s.outputTopic);
        }
        names.add(JOB_EVENTS_TOPIC);
        names.addAll(FarmTopics.fixed());
        for (Stage s : values()) names.add(s.dlqTopic());
        return List.copyOf(names);
    }

    /** How many partitions {@code topic} gets: dead letters are rare and read by people, one; the rest {@code pipelinePartitions}. */
    public static int partitions(String topic, int pipelinePartitions) {
        for (Stage s : values()) {
            if (s.dlqTopic().equals(topic)) return 1;
        }
        return FarmTopics.fixed().contains(topic) ? FarmTopics.partitions(pipelinePartitions) : pipelinePartitions;
    }

    /** Every role a process can run ({@code relayfarm.roles}): the gateway, each stage's service, the tuner worker and the hardware agent. */
    public static List<String> roles() {
        List<String> roles = new ArrayList<>();
        roles.add(GATEWAY);
        for (Stage s : values()) roles.add(s.serviceName());
        roles.add(TUNER_WORKER);
        roles.add(HARDWARE_AGENT);
        return List.copyOf(roles);
    }
}
