package dev.relayfarm.services.store;

import java.time.Instant;
import java.util.UUID;

/**
 * One {@code job_events} row: what the gateway streams and what every stage also publishes to
 * {@code job.events} (schema {@code schemas/messages/job.events.schema.json}): the record is the message, field for
 * field, so a renamed component changes the wire.
 *
 * @param stage null for the gateway's own events (queued, cancelled)
 */
public record JobEvent(long id, UUID jobId, String stage, String kind, String status, String message, Long durationMs, Instant at) {}
