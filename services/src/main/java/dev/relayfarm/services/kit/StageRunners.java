package dev.relayfarm.services.kit;

import dev.relayfarm.services.store.ArtifactStore;
import dev.relayfarm.services.store.JobStore;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.kafka.KafkaProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The consumer loops of the stage handlers this process runs: per handler {@link StageSettings#concurrency}
 * threads, each a member of the stage's consumer group ({@link Stage#consumerGroup}). A record's offset is
 * committed only after {@link StageProcessor} has stored and sent its result (at-least-once; redelivery is
 * made harmless by the stored stage results).
 *
 * <p>Stopping (the Spring context closing) stops polling, lets the message in progress finish (up to
 * {@link StageSettings#shutdownTimeout}, then interrupts it), and closes the consumers, so the group
 * hands their partitions to the remaining members at once; an uncommitted message is simply redelivered.
 */
@Component
public class StageRunners implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(StageRunners.class);

    private final List<StageHandler> handlers;
    private final JobStore jobs;
    private final ArtifactStore artifacts;
    private final JobEvents events;
    private final KafkaTemplate<String, String> kafka;
    private final TransactionTemplate tx;
    private final StageSettings settings;
    private final OpenTelemetry otel;
    private final KafkaProperties kafkaProperties;
    private final List<Loop> loops = new ArrayList<>();
    private volatile boolean running;

    public StageRunners(ObjectProvider<StageHandler> handlers, JobStore jobs, ArtifactStore artifacts, JobEvents events, KafkaTemplate<String, String> kafka,
                        TransactionTemplate tx, StageSettings settings, OpenTelemetry otel, KafkaProperties kafkaProperties) {
        this.handlers = handlers.orderedStream().toList();
        this.jobs = jobs;
        this.artifacts = artifacts;
        this.events = events;
        this.kafka = kafka;
        this.tx = tx;
        this.settings = settings;
        this.otel = otel;
        this.kafkaProperties = kafkaProperties;
    }

    @Override
    public synchronized void start() {
        for (StageHandler h : handlers) {
            for (int i = 0; i < settings.concurrency(); i++) {
                Loop loop = new Loop(h, i);
                loops.add(loop);
                loop.thread.start();
            }
            LOG.info("{}: consuming {} as group {} ({} thread(s))", h.stage().serviceName(), h.stage().inputTopic, h.stage().consumerGroup(), settings.concurrency());
        }
        running = true;
    }

    @Override
    public synchronized void stop() {
        for (Loop l : loops) l.requestStop();
        long deadline = System.nanoTime() + settings.shutdownTimeout().toNanos();
        for (Loop l : loops) {
            try {
                l.thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                if (l.thread.isAlive()) {
                    LOG.warn("{}: message in progress did not finish within {}, interrupting", l.thread.getName(), settings.shutdownTimeout());
                    l.thread.interrupt();
                    l.thread.join(5_000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        loops.clear();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** The stages this process consumes. */
    public List<Stage> stages() {
        return handlers.stream().map(StageHandler::stage).toList();
    }

    private Map<String, Object> consumerProperties(Stage stage, int index) {
        Map<String, Object> p = kafkaProperties.buildConsumerProperties(null);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, stage.consumerGroup());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, stage.consumerGroup() + "-" + index + "-" + ProcessHandle.current().pid());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // one message at a time: a stage can take minutes, and an uncommitted batch would be redone after a crash
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, (int) settings.maxPollInterval().toMillis());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        return p;
    }

    /** One consumer thread. */
    private final class Loop implements StageProcessor.StopSignal, Runnable {
        final Thread thread;
        final StageHandler handler;
        final int index;
        final Object wait = new Object();
        volatile boolean stopping;
        volatile KafkaConsumer<String, String> consumer;

        Loop(StageHandler handler, int index) {
            this.handler = handler;
            this.index = index;
            this.thread = new Thread(this, "stage-" + handler.stage().serviceName() + "-" + index);
        }

        void requestStop() {
            stopping = true;
            KafkaConsumer<String, String> c = consumer;
            if (c != null) c.wakeup();
            synchronized (wait) {
                wait.notifyAll();
            }
        }

        @Override
        public boolean stopping() {
            return stopping;
        }

        @Override
        public boolean sleep(Duration d) {
            long end = System.nanoTime() + d.toNanos();
            synchronized (wait) {
                try {
                    for (long left; !stopping && (left = end - System.nanoTime()) > 0; ) wait.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return !stopping;
        }

        @Override
        public void run() {
            Stage stage = handler.stage();
            StageProcessor processor = new StageProcessor(handler, jobs, artifacts, events, kafka, tx, settings, otel, this);
            int failures = 0;
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProperties(stage, index))) {
                consumer = c;
                c.subscribe(List.of(stage.inputTopic));
                while (!stopping) {
                    ConsumerRecords<String, String> records;
                    try {
                        records = c.poll(settings.pollTimeout());
                    } catch (WakeupException e) {
                        continue; // requestStop
                    }
                    partitions:
                    for (TopicPartition tp : records.partitions()) {
                        for (ConsumerRecord<String, String> rec : records.records(tp)) {
                            StageProcessor.Outcome outcome;
                            try {
                                outcome = stopping ? StageProcessor.Outcome.REDELIVER : processor.process(rec);
                                failures = 0;
                            } catch (Exception e) {
                                // the database or the broker failed us (not the handler: its errors are handled inside)
                                failures++;
                                LOG.warn("{}: record {}-{}@{} not processed (will retry): {}", thread.getName(), tp.topic(), tp.partition(), rec.offset(), e.toString());
                                outcome = StageProcessor.Outcome.REDELIVER;
                                sleep(settings.backoffAfter(Math.min(failures, 10)));
                            }
                            if (outcome == StageProcessor.Outcome.REDELIVER) {
                                c.seek(tp, rec.offset());
                                continue partitions;
                            }
                            try {
                                c.commitSync(Map.of(tp, new OffsetAndMetadata(rec.offset() + 1)));
                            } catch (WakeupException e) {
                                // stopping during the commit: commit once more, it is the result of finished work
                                c.commitSync(Map.of(tp, new OffsetAndMetadata(rec.offset() + 1)));
                            }
                        }
                    }
                }
            } catch (RuntimeException e) {
                LOG.error("{}: consumer loop ended: {}", thread.getName(), e.toString(), e);
            } finally {
                consumer = null;
                LOG.info("{}: stopped", thread.getName());
            }
        }
    }
}
