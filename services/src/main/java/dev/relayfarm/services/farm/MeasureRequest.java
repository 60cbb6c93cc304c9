package dev.relayfarm.services.farm;

import dev.relayfarm.tuning.measure.Candidate;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One round of a tuning task for a device of {@code deviceClass}, built for {@code target} (topic {@code measure.requests.<class>}, key: the
 * request id): the task's default as the {@code reference} and the candidates, already lowered to C by the worker, so
 * an agent only builds and runs (the library's {@code SandboxedRunner#measureCandidates}). The request id makes the
 * measurement exactly-once: whichever agent measures it and however often, its records are written once.
 */
public record MeasureRequest(UUID requestId, long taskId, String workerId, String deviceClass, String target, Candidate reference, List<Candidate> candidates,
                             Instant sentAt) {
    public MeasureRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(deviceClass, "deviceClass");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(reference, "reference");
        candidates = List.copyOf(candidates);
        Objects.requireNonNull(sentAt, "sentAt");
    }
}
