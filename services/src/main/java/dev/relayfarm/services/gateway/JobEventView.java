package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.time.Instant;
import java.util.UUID;

/**
 * One {@code job_events} row as the event stream sends it ({@code data:} of one server-sent event whose {@code id:}
 * is {@link #id}). {@code stage} is null for the gateway's own events (QUEUED, CANCELLED); {@code status} is the
 * job's status after the event.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record JobEventView(long id, UUID jobId, String stage, String kind, String status, String message, Long durationMs, Instant at) {
    /** The kinds after which a job never changes again. */
    boolean terminal() {
        return kind.equals("SUCCEEDED") || kind.equals("FAILED") || kind.equals("CANCELLED");
    }
}
