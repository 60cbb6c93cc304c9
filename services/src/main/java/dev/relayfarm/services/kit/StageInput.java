package dev.relayfarm.services.kit;

import dev.relayfarm.services.store.JobRow;

/**
 * What a stage handler gets: the message and the job's row. {@link #attempt} counts this stage's tries of
 * this message (1 first).
 */
public record StageInput(Envelope envelope, JobRow job, int attempt) {
    /** The job's options as the gateway sent them. */
    public JobOptions options() {
        return switch (envelope.payload()) {
            case JobPayload p -> p.options();
            case TunedPayload p -> p.options();
            case ArtifactPayload p -> throw noJob();
        };
    }

    /** The model's description. */
    public JobModel model() {
        return switch (envelope.payload()) {
            case JobPayload p -> p.model();
            case TunedPayload p -> p.model();
            case ArtifactPayload p -> throw noJob();
        };
    }

    private IllegalArgumentException noJob() {
        return new IllegalArgumentException("an artifact.built message (from stage " + envelope.stage() + ") carries no model and options");
    }

    /** The message's payload as {@code type}: what this stage's input topic carries. */
    public <P extends Payload> P payload(Class<P> type) {
        if (!type.isInstance(envelope.payload())) {
            throw new IllegalArgumentException("expected a " + type.getSimpleName() + " payload, got " + envelope.payload().getClass().getSimpleName()
                    + " (from stage " + envelope.stage() + ")");
        }
        return type.cast(envelope.payload());
    }

    /** A payload that carries {@code model} and {@code options} forward (every stage's output before codegen does). */
    public JobPayload forwardPayload() {
        return new JobPayload(model(), options());
    }

    /** The input's IR (the previous stage's output), a blob key. */
    public String irRef() {
        String ref = envelope.irRef();
        if (ref == null) throw new IllegalArgumentException("message from " + envelope.stage() + " has no irRef");
        return ref;
    }
}
