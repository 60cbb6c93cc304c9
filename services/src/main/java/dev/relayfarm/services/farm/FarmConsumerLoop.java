package dev.relayfarm.services.farm;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer of a farm topic in a consumer group, for work that takes minutes (a tuning task) or seconds (a batch
 * of measurements): the record is handled on a thread of its own while this thread keeps polling with the partitions
 * paused, so a busy member stays in the group however long the work takes, and a dead one (SIGKILL) leaves it after
 * the session timeout; the group coordinator then gives its partitions, and the uncommitted record, to another
 * member. The broker's membership is the lease: no lease table, no clock to trust but the coordinator's. The
 * cooperative sticky assignor moves only the partitions that must move, so a member joining or leaving does not take
 * work in progress away from the others.
 *
 * <p>The offset is committed after the handler returns (at-least-once; handlers make a second delivery harmless). A
 * handler that throws has its record redelivered after a pause, {@value #MAX_FAILURES} times at most, then the record
 * is skipped with an error in the log (a message that can never succeed must not block its partition). When the
 * record's partition is taken away mid-work (a rebalance), {@link Control#revoked} turns true, the handler is
 * interrupted and nothing is committed: the new owner redoes it. {@code accepting} false (a draining agent) leaves the
 * group once idle, so the class's other members get the partitions; true again joins it again. {@link #close} stops
 * taking records and tells the handler ({@link Control#stopping}), lets it finish up to the drain time, commits it,
 * and leaves the group. The loop survives a broker or client failure: it closes its consumer and starts a new one.
 */
public final class FarmConsumerLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FarmConsumerLoop.class);
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(2);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(3);
    static final int MAX_FAILURES = 3;

    /** What a handler may ask while it works. */
    public interface Control {
        /** The record's partition went to another member: stop, the new owner redoes the record. */
        boolean revoked();

        /** The process is stopping: finish what must be finished (an agent's batch), or stop at the next safe point. */
        boolean stopping();
    }

    /** Handles one record. */
    public interface Handler {
        void handle(ConsumerRecord<String, String> record, Control control) throws Exception;
    }

    private final String name;
    private final String topic;
    private final Map<String, Object> properties;
    private final Handler handler;
    private final java.util.function.BooleanSupplier accepting;
    private final ExecutorService work;
    private final Thread thread;
    private final Map<TopicPartition, long[]> failures = new HashMap<>(); // partition -> {offset, failures}
    private volatile boolean stopping;
    private volatile long drainDeadline = Long.MAX_VALUE;
    private volatile InFlight inFlight;
    private volatile KafkaConsumer<String, String> consumer;
    private boolean subscribed;

    /** A record being handled; {@code ended} completes when the handler has really returned (not when it was cancelled). */
    private record InFlight(ConsumerRecord<String, String> record, TopicPartition partition, Future<?> future, CompletableFuture<Throwable> ended,
                            boolean[] revoked) {}

    /**
     * @param kafka the client properties (bootstrap servers and the like); the loop sets the group, manual commits, one
     *              record per poll, the cooperative assignor and string deserializers
     */
    public FarmConsumerLoop(String name, String topic, String group, Map<String, Object> kafka, Duration sessionTimeout, Handler handler,
                            java.util.function.BooleanSupplier accepting) {
        this.name = Objects.requireNonNull(name, "name");
        this.topic = Objects.requireNonNull(topic, "topic");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.accepting = accepting != null ? accepting : () -> true;
        Map<String, Object> p = new HashMap<>(kafka);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, name + "-" + ProcessHandle.current().pid());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) sessionTimeout.toMillis());
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, (int) Math.max(500, sessionTimeout.toMillis() / 4));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        this.properties = p;
        this.work = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().name(name + "-work").daemon().unstarted(r));
        this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
    }

    public FarmConsumerLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        while (true) {
            KafkaConsumer<String, String> c = null;
            try {
                c = new KafkaConsumer<>(properties);
                consumer = c;
                subscribed = false;
                if (poll(c)) return;
            } catch (RuntimeException e) {
                LOG.error("{}: consumer failed, starting a new one in {}: {}", name, RETRY_PAUSE, e.toString(), e);
            } finally {
                consumer = null;
                // leaving the group hands the partitions on at once; bounded, for a broker that is gone already
                if (c != null) c.close(CLOSE_TIMEOUT);
            }
            if (stopping && inFlight == null) return;
            sleep(RETRY_PAUSE);
        }
    }

    /** Polls until stopped (true) or the consumer fails (an exception). */
    private boolean poll(KafkaConsumer<String, String> c) {
        while (true) {
            InFlight f = inFlight;
            if (f == null && stopping) return true;
            if (f != null && stopping && System.nanoTime() > drainDeadline) {
                LOG.warn("{}: the record in progress did not finish in the drain time; interrupted, it will be redelivered", name);
                f.future().cancel(true);
                return true;
            }
            if (f == null) followAccepting(c);
            if (!subscribed) {
                sleep(POLL);
                continue;
            }
            ConsumerRecords<String, String> records = c.poll(POLL);
            if (f != null) {
                c.pause(c.assignment()); // partitions assigned while busy must not deliver either
                if (f.ended().isDone()) finish(c, f);
                continue;
            }
            for (ConsumerRecord<String, String> r : records) { // at most one (max.poll.records = 1)
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                boolean[] revoked = {false};
                CompletableFuture<Throwable> ended = new CompletableFuture<>();
                Control control = new Control() {
                    @Override
                    public boolean revoked() {
                        return revoked[0];
                    }

                    @Override
                    public boolean stopping() {
                        return stopping;
                    }
                };
                c.pause(c.assignment());
                inFlight = new InFlight(r, tp, work.submit(() -> {
                    Throwable failure = null;
                    try {
                        handler.handle(r, control);
                    } catch (Throwable e) {
                        failure = e;
                    } finally {
                        ended.complete(failure);
                    }
                }), ended, revoked);
            }
        }
    }

    /** Joins or leaves the group as {@code accepting} says (only while idle). */
    private void followAccepting(KafkaConsumer<String, String> c) {
        boolean want = !stopping && accepting.getAsBoolean();
        if (want && !subscribed) {
            c.subscribe(List.of(topic), new Rebalance());
            subscribed = true;
        } else if (!want && subscribed) {
            c.unsubscribe();
            subscribed = false;
        }
    }

    private void finish(KafkaConsumer<String, String> c, InFlight f) {
        inFlight = null;
        Throwable failure = f.ended().join();
        long offset = f.record().offset();
        if (f.revoked()[0]) {
            // the partition is another member's now: it redoes the record
        } else if (failure == null || failures(f.partition(), offset) >= MAX_FAILURES) {
            if (failure != null) {
                LOG.error("{}: {}@{} failed {} times, skipped: {}", name, f.partition(), offset, MAX_FAILURES, failure.toString(), failure);
            }
            failures.remove(f.partition());
            try {
                c.commitSync(Map.of(f.partition(), new OffsetAndMetadata(offset + 1)));
            } catch (KafkaException e) {
                // the group moved on (a commit after losing the partition): the new owner redoes the record
                LOG.warn("{}: could not commit {}@{}: {}", name, f.partition(), offset, e.toString());
            }
        } else {
            LOG.warn("{}: handling {}@{} failed, redelivering it in {}: {}", name, f.partition(), offset, RETRY_PAUSE, failure.toString(), failure);
            c.seek(f.partition(), offset);
            sleep(RETRY_PAUSE);
        }
        if (!stopping && subscribed) c.resume(c.assignment());
    }

    /** Counts one more failure of {@code offset} on {@code tp}; returns the count. */
    private long failures(TopicPartition tp, long offset) {
        long[] f = failures.computeIfAbsent(tp, k -> new long[] {offset, 0});
        if (f[0] != offset) {
            f[0] = offset;
            f[1] = 0;
        }
        return ++f[1];
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            InFlight f = inFlight;
            if (f != null && partitions.contains(f.partition()) && !f.ended().isDone()) {
                LOG.warn("{}: partition {} went to another member while {} was in progress; stopping it (the new owner redoes it)", name, f.partition(),
                        f.record().offset());
                f.revoked()[0] = true;
                f.future().cancel(true);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            KafkaConsumer<String, String> c = consumer;
            if (c != null && inFlight != null) c.pause(partitions);
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops taking records; the one in progress gets up to {@code drain} to finish and be committed. No wakeup: a poll
     * lasts {@link #POLL}, and a wakeup landing between a poll and a commit would lose the commit.
     */
    public void close(Duration drain) {
        drainDeadline = System.nanoTime() + drain.toNanos();
        stopping = true;
        try {
            thread.join(drain.plusSeconds(10).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        work.shutdownNow();
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }
}
