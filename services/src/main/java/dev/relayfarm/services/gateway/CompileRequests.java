package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.services.kit.Envelope;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobRow;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Sends a job's compile.requested message (the first hop of the pipeline): key = job id, value = the
 * {@link Envelope} as JSON (stage "gateway", attempt 1, irRef null), header {@code traceparent}. Payload:
 * {@code {"model": {"sha256", "name", "format"}, "options": {"target", "optLevel", "shapes"}}}.
 *
 * <p>The send is synchronous (bounded by {@code relayfarm.gateway.send-timeout}): a 201 means the broker has the
 * message; a job whose send never happened (the gateway stopped between its commit and the send) is re-sent by
 * {@link QueuedJobsResender}.
 */
@Component
@ServiceRole("gateway")
public class CompileRequests {
    static final String STAGE = "gateway";

    private final KafkaTemplate<String, String> kafka;
    private final ObjectMapper json;
    private final GatewayProperties props;

    public CompileRequests(KafkaTemplate<String, String> kafka, ObjectMapper json, GatewayProperties props) {
        this.kafka = kafka;
        this.json = json;
        this.props = props;
    }

    Envelope envelope(UUID id, JobSubmission s, String traceparent) {
        return envelope(id, s.modelSha256(), s.modelName(), s.format().wireName, s.target(), s.optLevel(), s.shapes(), traceparent);
    }

    /** The compile.requested envelope of a stored job (see {@link QueuedJobsResender}). */
    Envelope envelope(JobRow job, String traceparent) {
        return envelope(job.id(), job.modelSha256(), job.modelName(), job.modelFormat(), job.target(), job.optLevel(), job.shapes(), traceparent);
    }

    private Envelope envelope(UUID id, String modelSha256, String modelName, String format, String target, int optLevel, String shapes, String traceparent) {
        ObjectNode payload = json.createObjectNode();
        ObjectNode model = payload.putObject("model");
        model.put("sha256", modelSha256);
        model.put("name", modelName);
        model.put("format", format);
        ObjectNode options = payload.putObject("options");
        options.put("target", target);
        options.put("optLevel", optLevel);
        options.put("shapes", shapes);
        return new Envelope(id, STAGE, 1, Envelope.SCHEMA_VERSION, null, payload, traceparent, Instant.now());
    }

    /** Sends and waits for the broker's acknowledgement; throws {@link SendFailed} naming why it did not arrive. */
    void send(Envelope e) {
        try {
            var record = new ProducerRecord<>(Stage.IMPORTER.inputTopic, e.jobId().toString(), Envelopes.write(e));
            if (e.traceparent() != null) record.headers().add("traceparent", e.traceparent().getBytes(StandardCharsets.UTF_8));
            kafka.send(record).get(props.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
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
