package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.Envelope;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobRow;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Sends a job's compile.requested message (the first hop of the pipeline), built by
 * {@link Envelopes#compileRequested} and keyed by {@link Envelopes#record}.
 *
 * <p>The send is synchronous (bounded by {@code relayfarm.gateway.send-timeout}): a 201 means the broker has the
 * message; a job whose send never happened (the gateway stopped between its commit and the send) is re-sent by
 * {@link QueuedJobsResender}.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class CompileRequests {
    private final KafkaTemplate<String, String> kafka;
    private final GatewayProperties props;

    public CompileRequests(KafkaTemplate<String, String> kafka, GatewayProperties props) {
        this.kafka = kafka;
        this.props = props;
    }

    Envelope envelope(UUID id, JobSubmission s, String traceparent) {
        return Envelopes.compileRequested(id, s.modelSha256(), s.modelName(), s.format().wireName, s.target(), s.optLevel(), s.shapes(), s.tune(), s.quantize(), traceparent);
    }

    /** The compile.requested envelope of a stored job (see {@link QueuedJobsResender}). */
    Envelope envelope(JobRow job, String traceparent) {
        return Envelopes.compileRequested(job.id(), job.modelSha256(), job.modelName(), job.modelFormat(), job.target(), job.optLevel(), job.shapes(), job.tune(), job.quantize(), traceparent);
    }

    /** Sends and waits for the broker's acknowledgement; throws {@link SendFailed} naming why it did not arrive. */
    void send(Envelope e) {
        try {
            kafka.send(Envelopes.record(Stage.IMPORTER.inputTopic, e)).get(props.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException ex) {
            throw new SendFailed("Kafka refused compile.requested: " + ex.getCause().getMessage(), ex.getCause());
        } catch (TimeoutException ex) {
            throw new SendFailed("Kafka did not acknowledge compile.requested within " + props.sendTimeout(), ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new SendFailed("interrupted while sending compile.requested", ex);
        }
    }

    static final class SendFailed extends RuntimeException {
        SendFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
