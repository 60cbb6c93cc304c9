package dev.relayfarm.services;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a whole topic from the beginning (no consumer group): what tests check messages with. */
public final class TopicReader {
    private TopicReader() {}

    public static List<ConsumerRecord<String, String>> readAll(String topic) {
        return readAll(FarmTestInfra.kafkaBootstrap(), topic);
    }

    /** {@link #readAll(String)} on another broker than the shared one. */
    public static List<ConsumerRecord<String, String>> readAll(String bootstrapServers, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = c.partitionsFor(topic, Duration.ofSeconds(10)).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) out.add(r);
            }
        }
        return out;
    }

    /** The records of one job (key = job id). */
    public static List<ConsumerRecord<String, String>> readJob(String topic, java.util.UUID jobId) {
        return readAll(topic).stream().filter(r -> jobId.toString().equals(r.key())).toList();
    }
}
