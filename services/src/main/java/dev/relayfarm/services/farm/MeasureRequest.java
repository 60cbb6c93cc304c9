package dev.relayfarm.services.farm;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One round of a tuning task for a device of {@code deviceClass}, built for {@code target} (topic {@code measure.requests.<class>}, key: the
 * request id): the task's default as the {@code reference} and the candidates, all of one {@link MeasureCandidate} kind: C
 * kernels already lowered by the worker, so a CPU agent only builds and runs (the library's
 * {@code SandboxedRunner#measureCandidates}), or VTA layer schedules, which an FPGA agent lowers and simulates. The
 * request id makes the measurement exactly-once: whichever agent measures it and however often, its records are
 * written once.
 */
public record MeasureRequest(UUID requestId, long taskId, String workerId, String deviceClass, String target, MeasureCandidate reference,
                             List<MeasureCandidate> candidates, Instant sentAt) {
    public MeasureRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(deviceClass, "deviceClass");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(reference, "reference");
        candidates = List.copyOf(candidates);
        for (int i = 0; i < candidates.size(); i++) {
            if (candidates.get(i).getClass() != reference.getClass()) {
                throw new IllegalArgumentException("measure request " + requestId + ": candidate " + i + " is a " + candidates.get(i).getClass().getSimpleName()
                        + ", its reference a " + reference.getClass().getSimpleName() + " (a request measures one kind)");
            }
        }
        Objects.requireNonNull(sentAt, "sentAt");
    }
}
