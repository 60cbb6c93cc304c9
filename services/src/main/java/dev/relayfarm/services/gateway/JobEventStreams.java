package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStatus;
import java.io.IOException;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The server-sent event streams of {@code GET /api/v1/jobs/{id}/events}: first the job's stored events, then new
 * ones as they appear, until the job is terminal; then one {@code event: end} (data: the final status) and the
 * stream closes. Each event's SSE {@code id} is its {@code job_events.id}, so a client that reconnects with
 * {@code Last-Event-ID} gets exactly what it missed.
 *
 * <p>Why poll {@code job_events} instead of consuming the {@code job.events} topic: the table is the record the
 * replay must come from anyway, and reading live events from the same place means no gap or duplicate between the
 * replay and the live part, and one resume rule (ids) for both. A topic consumer would need a consumer group (or
 * manual assignment) per gateway instance, would start at an offset unrelated to the replay, and would add nothing
 * but latency below the poll interval. The cost is one indexed query per open stream per
 * {@code relayfarm.gateway.event-poll} (default 250 ms) on a job's handful of rows.
 *
 * <p>Each stream runs on its own virtual thread (blocking JDBC and sleeps are cheap there) and stops when the job is
 * terminal, the client goes away (a failed send), or {@code relayfarm.gateway.event-stream-limit} passes.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class JobEventStreams {
    private static final Logger log = LoggerFactory.getLogger(JobEventStreams.class);
    /** A comment line now and then lets a dead client surface as a failed write even while the job is quiet. */
    private static final long KEEPALIVE_MS = 15_000;

    private final JobRepository jobs;
    private final GatewayProperties props;

    public JobEventStreams(JobRepository jobs, GatewayProperties props) {
        this.jobs = jobs;
        this.props = props;
    }

    SseEmitter open(UUID job, long afterEventId) {
        SseEmitter emitter = new SseEmitter(props.eventStreamLimit().toMillis());
        AtomicBoolean closed = new AtomicBoolean();
        emitter.onCompletion(() -> closed.set(true));
        emitter.onTimeout(() -> closed.set(true));
        emitter.onError(e -> closed.set(true));
        Thread.ofVirtual().name("job-events-" + job).start(() -> stream(job, afterEventId, emitter, closed));
        return emitter;
    }

    private void stream(UUID job, long after, SseEmitter emitter, AtomicBoolean closed) {
        // Ids already sent. Events are read with id > the client's Last-Event-ID on every poll, not > the last id
        // sent: BIGSERIAL ids are taken at insert but become visible at commit, so a smaller id can appear after a
        // larger one (a cancel racing a stage's event); the set keeps each event to one send.
        Set<Long> sent = new HashSet<>();
        long lastWrite = System.currentTimeMillis();
        boolean sawTerminalEvent = false;
        int terminalPolls = 0;
        try {
            while (!closed.get()) {
                // Status before events: if the job was terminal before this read, every event it had is in it.
                Optional<JobStatus> status = jobs.status(job);
                if (status.isEmpty()) break;
                for (JobEventView e : jobs.eventsAfter(job, after)) {
                    if (!sent.add(e.id())) continue;
                    emitter.send(SseEmitter.event().id(Long.toString(e.id())).name("job-event").data(e, MediaType.APPLICATION_JSON));
                    sawTerminalEvent |= e.terminal();
                    lastWrite = System.currentTimeMillis();
                }
                // A terminal status normally comes with its terminal event in the same transaction; allow one more
                // poll in case a writer commits them separately.
                if (status.get().terminal() && (sawTerminalEvent || ++terminalPolls > 1)) {
                    emitter.send(SseEmitter.event().name("end").data("{\"status\":\"" + status.get() + "\"}", MediaType.APPLICATION_JSON));
                    emitter.complete();
                    return;
                }
                if (System.currentTimeMillis() - lastWrite > KEEPALIVE_MS) {
                    emitter.send(SseEmitter.event().comment("keep-alive"));
                    lastWrite = System.currentTimeMillis();
                }
                Thread.sleep(props.eventPoll());
            }
        } catch (IOException | IllegalStateException e) {
            // The client went away or the emitter timed out: nothing to tell anyone.
            log.debug("event stream of job {} ended: {}", job, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            emitter.complete();
        } catch (RuntimeException e) {
            log.error("event stream of job {} failed", job, e);
            emitter.completeWithError(e);
        }
    }
}
