package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.TuningRunView;
import dev.relayfarm.services.store.TuningRuns;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The server-sent event streams of {@code GET /api/v1/tuning-runs/{id}/events}: the run's view (event {@code run},
 * id = the send's sequence number) every {@code relayfarm.farm.run-event-interval} (1 s) until the run is DONE,
 * CANCELLED or FAILED; then one {@code event: end} (data {@code {"status": ...}}) and the stream closes. The run's
 * status is computed on read, and stored ({@link TuningRuns#refreshStatus}) when the stream sees it end.
 *
 * <p>A view each interval rather than events per trial: a run's tasks change many times a second while workers
 * measure, a dashboard wants the current state, and a client that reconnects needs nothing replayed. Each stream runs
 * on its own virtual thread, like the job event streams.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class TuningRunStreams {
    private static final Logger log = LoggerFactory.getLogger(TuningRunStreams.class);

    private final TuningRuns runs;
    private final FarmProperties props;

    public TuningRunStreams(TuningRuns runs, FarmProperties props) {
        this.runs = runs;
        this.props = props;
    }

    SseEmitter open(long runId) {
        SseEmitter emitter = new SseEmitter(props.runEventLimit().toMillis());
        AtomicBoolean closed = new AtomicBoolean();
        emitter.onCompletion(() -> closed.set(true));
        emitter.onTimeout(() -> closed.set(true));
        emitter.onError(e -> closed.set(true));
        Thread.ofVirtual().name("tuning-run-events-" + runId).start(() -> stream(runId, emitter, closed));
        return emitter;
    }

    private void stream(long runId, SseEmitter emitter, AtomicBoolean closed) {
        long seq = 0;
        try {
            while (!closed.get()) {
                Optional<TuningRunView> view = runs.find(runId);
                if (view.isEmpty()) break;
                emitter.send(SseEmitter.event().id(Long.toString(++seq)).name("run").data(view.get(), MediaType.APPLICATION_JSON));
                if (view.get().ended()) {
                    String status = runs.refreshStatus(runId).orElse(view.get().status());
                    emitter.send(SseEmitter.event().name("end").data("{\"status\":\"" + status + "\"}", MediaType.APPLICATION_JSON));
                    emitter.complete();
                    return;
                }
                Thread.sleep(props.runEventInterval());
            }
        } catch (IOException | IllegalStateException e) {
            // the client went away or the emitter timed out: nothing to tell anyone
            log.debug("event stream of tuning run {} ended: {}", runId, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            emitter.complete();
        } catch (RuntimeException e) {
            log.error("event stream of tuning run {} failed", runId, e);
            emitter.completeWithError(e);
        }
    }
}
