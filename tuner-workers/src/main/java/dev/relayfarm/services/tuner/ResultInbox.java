package dev.relayfarm.services.tuner;

import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.MeasureResult;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.kafka.KafkaProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * This worker's view of {@code measure.results}: every worker reads the whole topic in a group of its own (from the
 * end: results of requests sent before it started belong to someone else) and completes the requests it is waiting
 * for. A result for no one waiting — a worker that died, a duplicate from a redelivered request — is dropped: only a
 * waiting worker writes records, each request's once.
 */
@Component
@ServiceRole(Stage.TUNER_WORKER)
public class ResultInbox implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(ResultInbox.class);

    private final KafkaProperties kafkaProperties;
    private final Map<UUID, CompletableFuture<MeasureResult>> waiting = new ConcurrentHashMap<>();
    private final CountDownLatch assigned = new CountDownLatch(1);
    private volatile KafkaConsumer<String, String> consumer;
    private volatile boolean running;
    private Thread thread;

    public ResultInbox(KafkaProperties kafkaProperties) {
        this.kafkaProperties = kafkaProperties;
    }

    /** A future completed when request {@code id}'s result arrives; register before sending the request. */
    public CompletableFuture<MeasureResult> expect(UUID id) {
        return waiting.computeIfAbsent(id, k -> new CompletableFuture<>());
    }

    public void forget(UUID id) {
        waiting.remove(id);
    }

    /** Waits until the consumer has its partitions (a request sent before would lose its result). */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        return assigned.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void start() {
        Map<String, Object> p = kafkaProperties.buildConsumerProperties(null);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "tuner-worker-results-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        running = true;
        thread = Thread.ofPlatform().name("tuner-results").daemon().start(() -> {
            KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
            try {
                consumer = c;
                c.subscribe(List.of(FarmTopics.MEASURE_RESULTS));
                while (running) {
                    try {
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) deliver(r);
                    } catch (WakeupException e) {
                        continue;
                    }
                    if (!c.assignment().isEmpty()) assigned.countDown();
                }
            } catch (RuntimeException e) {
                LOG.error("measure.results consumer stopped: {}", e.toString(), e);
            } finally {
                c.close(Duration.ofSeconds(3));
            }
        });
    }

    private void deliver(ConsumerRecord<String, String> r) {
        MeasureResult result;
        try {
            result = FarmMessages.read(r.value(), MeasureResult.class);
        } catch (IllegalArgumentException e) {
            LOG.warn("unreadable measure result at {}@{}: {}", r.partition(), r.offset(), e.getMessage());
            return;
        }
        CompletableFuture<MeasureResult> f = waiting.get(result.requestId());
        if (f != null) f.complete(result);
    }

    @Override
    public void stop() {
        running = false;
        KafkaConsumer<String, String> c = consumer;
        if (c != null) c.wakeup();
        try {
            if (thread != null) thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Up before the worker's task consumers, down after them. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }
}
