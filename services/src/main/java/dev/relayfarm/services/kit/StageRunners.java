package dev.relayfarm.services.kit;

import dev.relayfarm.services.store.ArtifactStore;
import dev.relayfarm.services.store.BlobRefs;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.StageConsumers;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>No Throwable stops a stage: handlers run on threads of their own ({@link StageProcessor}) and come back as
 * values; a consumer thread that dies anyway (an Error in polling or committing) is found by the watchdog within
 * {@link StageSettings#watchdogInterval} and replaced by a fresh thread with a fresh consumer (the uncommitted record
 * is redelivered to it). The watchdog also reports every thread to {@code stage_consumers} (alive, restarts, last
 * error, job in progress), which {@link #health} and the gateway's {@code /api/v1/health} show.
 *
 * <p>Stopping (the Spring context closing) stops polling on every loop at once, lets the messages in progress finish
 * (up to {@link StageSettings#shutdownTimeout}, one deadline shared by all loops of the process, then interrupts all
 * still busy at once and waits one more shared cancel-grace + 2 s), and closes the consumers, so the group
 * hands their partitions to the remaining members at once; an uncommitted message is simply redelivered.
 */
@Component
public class StageRunners implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(StageRunners.class);
    private static final Duration CONSUMER_CLOSE_TIMEOUT = Duration.ofSeconds(3);

    private final List<StageHandler> handlers;
    private final JobStore jobs;
    private final ArtifactStore artifacts;
    private final JobEvents events;
    private final KafkaTemplate<String, String> kafka;
    private final TransactionTemplate tx;
    private final StageSettings settings;
    private final OpenTelemetry otel;
    private final KafkaProperties kafkaProperties;
    private final BlobRefs refs;
    private final StageConsumers consumers;
    private final List<Loop> loops = new CopyOnWriteArrayList<>();
    /** Names this process's rows in stage_consumers (two contexts in one JVM, as in tests, must not share them). */
    private final String instance = ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    private ScheduledExecutorService watchdog;
    private volatile boolean running;
    private volatile boolean stopRequested;

    public StageRunners(ObjectProvider<StageHandler> handlers, JobStore jobs, ArtifactStore artifacts, JobEvents events, KafkaTemplate<String, String> kafka,
                        TransactionTemplate tx, StageSettings settings, OpenTelemetry otel, KafkaProperties kafkaProperties, BlobRefs refs,
                        StageConsumers consumers) {
        this.handlers = handlers.orderedStream().toList();
        this.jobs = jobs;
        this.artifacts = artifacts;
        this.events = events;
        this.kafka = kafka;
        this.tx = tx;
        this.settings = settings;
        this.otel = otel;
        this.kafkaProperties = kafkaProperties;
        this.refs = refs;
        this.consumers = consumers;
    }

    @Override
    public synchronized void start() {
        stopRequested = false;
        for (StageHandler h : handlers) {
            for (int i = 0; i < settings.concurrency(); i++) {
                Loop loop = new Loop(h, i);
                loops.add(loop);
                loop.startThread();
            }
            LOG.info("{}: consuming {} as group {} ({} thread(s))", h.stage().serviceName(), h.stage().inputTopic, h.stage().consumerGroup(), settings.concurrency());
        }
        if (!loops.isEmpty()) {
            try {
                consumers.prune(Duration.ofHours(1));
            } catch (RuntimeException e) {
                LOG.debug("stage_consumers not pruned: {}", e.toString());
            }
            watchdog = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("stage-watchdog").unstarted(r));
            long every = settings.watchdogInterval().toMillis();
            watchdog.scheduleWithFixedDelay(this::watch, 0, every, TimeUnit.MILLISECONDS);
        }
        running = true;
    }

    /** One watchdog round: restart dead consumer threads, report every thread. Never throws (the executor would stop). */
    private void watch() {
        for (Loop l : loops) {
            try {
                if (!l.stopping && !l.thread.isAlive()) {
                    l.restarts++;
                    LOG.warn("{}: consumer thread died ({}); restarting it (restart {})", l.name, l.lastError, l.restarts);
                    l.startThread();
                }
            } catch (Throwable e) {
                LOG.error("{}: watchdog could not restart the consumer thread: {}", l.name, e.toString());
            }
        }
        try {
            for (ConsumerHealth h : health()) {
                consumers.report(new StageConsumers.Row(instance + "-" + h.stage().serviceName() + "-" + h.index(), h.stage().wireName, h.alive(), h.restarts(),
                        h.busyJob(), h.lastError(), h.lastErrorAt(), null));
            }
        } catch (Throwable e) {
            LOG.debug("stage_consumers not updated: {}", e.toString());
        }
    }

    /** One consumer thread's state: what health endpoints show. */
    public record ConsumerHealth(Stage stage, int index, String thread, boolean alive, int restarts, UUID busyJob, String lastError, Instant lastErrorAt) {}

    /** Every consumer thread of this process, alive or not. */
    public List<ConsumerHealth> health() {
        return loops.stream().map(l -> new ConsumerHealth(l.handler.stage(), l.index, l.thread.getName(), l.thread.isAlive(), l.restarts, l.busyJob,
                l.lastError, l.lastErrorAt)).toList();
    }

    @Override
    public synchronized void stop() {
        // ONE deadline for the whole process (local mode runs every stage here): all loops are asked to stop at once,
        // then waited for together; those still busy when it passes are interrupted together and get one short
        // shared wait more. At most shutdown-timeout + cancel-grace + 2 s in all (10 + 5 + 2 s by default).
        for (Loop l : loops) l.requestStop();
        stopRequested = true;
        long deadline = System.nanoTime() + settings.shutdownTimeout().toNanos();
        if (watchdog != null) {
            watchdog.shutdownNow();
            try {
                // a round in progress may be starting a thread (it sees stopping and ends at once): let it finish, so
                // the joins below see the last thread
                watchdog.awaitTermination(millisLeft(deadline), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        watchdog = null;
        boolean interrupted = joinAll(deadline);
        List<Loop> busy = loops.stream().filter(l -> l.thread.isAlive()).toList();
        if (!busy.isEmpty()) {
            for (Loop l : busy) {
                LOG.warn("{}: message in progress did not finish within {}, interrupting it (it stays uncommitted and is redelivered)",
                        l.thread.getName(), settings.shutdownTimeout());
                l.thread.interrupt();
            }
            // each consumer thread interrupts its handler and waits up to cancel-grace for it, all at the same time
            if (!interrupted) joinAll(System.nanoTime() + settings.cancelGrace().toNanos() + TimeUnit.SECONDS.toNanos(2));
            for (Loop l : busy) {
                if (l.thread.isAlive()) LOG.warn("{}: still running after being interrupted; abandoned", l.thread.getName());
            }
        }
        loops.clear();
        // Best effort and bounded: with the database already gone (a whole farm stopping, a database outage) the pool
        // would hold the stop for its 30 s connection timeout; rows left behind are pruned after an hour anyway.
        try {
            CompletableFuture.runAsync(() -> consumers.remove(instance + "-")).get(2, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("stage_consumers rows not removed: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        running = false;
    }

    /** Joins every loop's thread against one deadline; true when this thread was interrupted meanwhile. */
    private boolean joinAll(long deadline) {
        for (Loop l : loops) {
            try {
                l.thread.join(millisLeft(deadline));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return true;
            }
        }
        return false;
    }

    private static long millisLeft(long deadline) {
        return Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
    }

    /** Whether {@link #stop} has asked the loops to stop (tests wait for it). */
    boolean stopRequested() {
        return stopRequested;
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
        final StageHandler handler;
        final int index;
        final String name;
        final Object wait = new Object();
        volatile Thread thread;
        volatile boolean stopping;
        volatile KafkaConsumer<String, String> consumer;
        volatile int restarts;
        volatile String lastError;
        volatile Instant lastErrorAt;
        volatile UUID busyJob;

        Loop(StageHandler handler, int index) {
            this.handler = handler;
            this.index = index;
            this.name = "stage-" + handler.stage().serviceName() + "-" + index;
        }

        void startThread() {
            thread = Thread.ofPlatform().name(restarts == 0 ? name : name + "-r" + restarts).unstarted(this);
            thread.start();
        }

        void failed(Throwable e) {
            lastError = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            lastErrorAt = Instant.now();
        }

        @Override
        public void busy(UUID jobId) {
            busyJob = jobId;
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
            StageProcessor processor = new StageProcessor(handler, jobs, artifacts, refs, events, kafka, tx, settings, otel, this);
            int failures = 0;
            KafkaConsumer<String, String> c = null;
            try {
                c = new KafkaConsumer<>(consumerProperties(stage, index));
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
                            } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
                                // the database or the broker failed us (not the handler: its Throwables come back as values);
                                // a VirtualMachineError other than a stack overflow ends the thread, and the watchdog starts a fresh one
                                failures++;
                                failed(e);
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
            } catch (Throwable e) {
                // the thread ends here; unless the runners are stopping, the watchdog replaces it with a fresh consumer
                failed(e);
                LOG.error("{}: consumer loop ended: {}", thread.getName(), e.toString(), e);
            } finally {
                consumer = null;
                // Leaving the group needs the broker: one that is gone must not hold a stopping service for the
                // client's default 30 s per consumer (the group notices a silent member by its session timeout).
                if (c != null) {
                    try {
                        c.close(CONSUMER_CLOSE_TIMEOUT);
                    } catch (RuntimeException e) {
                        LOG.debug("{}: closing the consumer: {}", thread.getName(), e.toString());
                    }
                }
                LOG.info("{}: stopped", thread.getName());
            }
        }
    }
}
