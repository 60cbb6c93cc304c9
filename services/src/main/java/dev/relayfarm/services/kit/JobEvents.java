package dev.relayfarm.services.kit;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * Job events: a {@code job_events} row each, and the same event on {@code job.events} (key = job id) for
 * the gateway's event stream. Publish after the transaction that inserted the row commits, so a consumer
 * never sees an event the database then rolls back.
 */
@Component
public class JobEvents {
    private static final Logger LOG = LoggerFactory.getLogger(JobEvents.class);
    private final JobStore jobs;
    private final KafkaTemplate<String, String> kafka;

    public JobEvents(JobStore jobs, KafkaTemplate<String, String> kafka) {
        this.jobs = jobs;
        this.kafka = kafka;
    }

    /** Inserts the row (inside the caller's transaction, if any); publish it afterwards. */
    public JobEvent insert(UUID jobId, String stage, String kind, JobStatus status, String message, Long durationMs) {
        return jobs.event(jobId, stage, kind, status, message, durationMs);
    }

    /** Sends events to {@code job.events}. A failed send is logged, not thrown: the row is the record, the topic a notification. */
    public void publish(JobEvent... events) {
        for (JobEvent e : events) {
            if (e == null) continue;
            try {
                kafka.send(new ProducerRecord<>(Stage.JOB_EVENTS_TOPIC, e.jobId().toString(), toJson(e))).get(30, TimeUnit.SECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                LOG.warn("job {}: event {} not published (interrupted)", e.jobId(), e.kind());
            } catch (Exception ex) {
                LOG.warn("job {}: event {} not published to {}: {}", e.jobId(), e.kind(), Stage.JOB_EVENTS_TOPIC, ex.toString());
            }
        }
    }

    /** The message form (schema {@code schemas/messages/job.events.schema.json}): the record's fields as they are. */
    public static String toJson(JobEvent e) {
        try {
            return Envelopes.MAPPER.writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("an event is plain data and always serializes", ex);
        }
    }
}
