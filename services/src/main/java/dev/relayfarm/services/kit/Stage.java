package dev.relayfarm.services.kit;

/**
 * The pipeline's stages in order, each one Kafka consumer group reading {@link #inputTopic} and writing
 * {@link #outputTopic} (ARCHITECTURE.md sections 2 and 4). A message that keeps failing goes to {@link #dlqTopic}.
 */
public enum Stage {
    IMPORTER("import", "compile.requested", "ir.imported", JobStatus.IMPORTING),
    TYPE_INFERENCE("infer", "ir.imported", "ir.typed", JobStatus.TYPING),
    OPTIMIZER("optimize", "ir.typed", "ir.optimized", JobStatus.OPTIMIZING),
    AUTOTUNER("tune", "ir.optimized", "ir.tuned", JobStatus.TUNING),
    CODEGEN("codegen", "ir.tuned", "artifact.built", JobStatus.GENERATING);

    /** Status events of every job, for the gateway's event stream. */
    public static final String JOB_EVENTS_TOPIC = "job.events";

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

    public String consumerGroup() {
        return "relayfarm-" + serviceName();
    }

    public String dlqTopic() {
        return inputTopic + "." + serviceName() + ".dlq";
    }
}
