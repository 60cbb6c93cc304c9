package dev.relayfarm.services.dashboard;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.thymeleaf.context.Context;
import org.thymeleaf.spring6.SpringTemplateEngine;

/**
 * The dashboard's live parts: a server-sent event stream that renders a page's live fragments (the same template
 * fragments the page itself was rendered with) every {@code relayfarm.dashboard.live-interval} and sends each one
 * whose HTML changed, as an event named after the fragment. htmx's SSE extension swaps it into the element with
 * {@code sse-swap="<name>"}: no polling loop in the browser, and a quiet farm sends nothing but a keep-alive.
 *
 * <p>Why render on a timer here rather than push on change: the state is PostgreSQL rows that several processes
 * write (agents, workers, stages), and the page shows derived values (heartbeat age, ETA) that change with time
 * alone; one query per stream per interval is what {@code JobEventStreams} pays too. A stream ends after
 * {@code relayfarm.dashboard.live-limit}; the browser's EventSource reconnects by itself.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class LiveFragments {
    private static final Logger log = LoggerFactory.getLogger(LiveFragments.class);
    private static final long KEEPALIVE_MS = 15_000;

    private final SpringTemplateEngine engine;
    private final DashboardSessions sessions;
    private final Duration interval;
    private final Duration limit;

    public LiveFragments(SpringTemplateEngine engine, DashboardSessions sessions, @Value("${relayfarm.dashboard.live-interval:1s}") Duration interval,
                         @Value("${relayfarm.dashboard.live-limit:30m}") Duration limit) {
        this.engine = engine;
        this.sessions = sessions;
        this.interval = interval;
        this.limit = limit;
    }

    /**
     * Streams the {@code fragments} of {@code template}, rendered with the variables {@code model} gives at each tick,
     * until the client goes away, {@code done} says so (after one last send), the session that opened it ends (logout,
     * expiry: a stream must not outlive its login), or the limit passes.
     */
    public SseEmitter open(String template, Set<String> fragments, Supplier<Map<String, Object>> model, Supplier<Boolean> done,
                           DashboardSessions.Session session) {
        SseEmitter emitter = new SseEmitter(limit.toMillis());
        AtomicBoolean closed = new AtomicBoolean();
        emitter.onCompletion(() -> closed.set(true));
        emitter.onTimeout(() -> {
            // the limit: end the response normally (the browser reconnects), not as an async-timeout error
            closed.set(true);
            emitter.complete();
        });
        emitter.onError(e -> closed.set(true));
        Thread.ofVirtual().name("dashboard-live-" + template)
                .start(() -> stream(template, fragments, model, done, () -> sessions.isLive(session), emitter, closed));
        return emitter;
    }

    private void stream(String template, Set<String> fragments, Supplier<Map<String, Object>> model, Supplier<Boolean> done,
                        Supplier<Boolean> loggedIn, SseEmitter emitter, AtomicBoolean closed) {
        Map<String, String> sent = new HashMap<>();
        long lastWrite = System.currentTimeMillis();
        try {
            while (!closed.get()) {
                if (!loggedIn.get()) {
                    emitter.complete();
                    return;
                }
                boolean last = done.get();
                Context ctx = new Context(Locale.ROOT, model.get());
                for (String f : fragments) {
                    String html = render(template, f, ctx);
                    if (html.equals(sent.get(f))) continue;
                    emitter.send(SseEmitter.event().name(f).data(html));
                    sent.put(f, html);
                    lastWrite = System.currentTimeMillis();
                }
                if (last) {
                    emitter.complete();
                    return;
                }
                if (System.currentTimeMillis() - lastWrite > KEEPALIVE_MS) {
                    emitter.send(SseEmitter.event().comment("keep-alive"));
                    lastWrite = System.currentTimeMillis();
                }
                Thread.sleep(interval);
            }
        } catch (IOException | IllegalStateException e) {
            log.debug("live stream of {} ended: {}", template, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            emitter.complete();
        } catch (RuntimeException e) {
            log.error("live stream of {} failed", template, e);
            emitter.completeWithError(e);
        }
    }

    /**
     * One fragment as one line: an SSE data field ends at a newline, and between tags a newline and its character
     * reference are the same whitespace (the dashboard's fragments hold no {@code <pre>} or script).
     */
    String render(String template, String fragment, Context ctx) {
        return engine.process(template, Set.of(fragment), ctx).replace("\r", "").replace("\n", "&#10;");
    }
}
