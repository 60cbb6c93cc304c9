package dev.relayfarm.services.kit;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaAdmin;

/**
 * The pipeline's topics (created at start-up if missing; existing ones are left as they are): every
 * stage's input and output, its DLQ, and {@code job.events}. Partitions bound how many consumers of one
 * stage can work in parallel.
 */
@Configuration(proxyBeanMethods = false)
public class TopicsConfig {
    @Bean
    public KafkaAdmin.NewTopics relayfarmTopics(@Value("${relayfarm.topics.partitions:3}") int partitions,
                                                @Value("${relayfarm.topics.replicas:1}") short replicas) {
        List<NewTopic> topics = new ArrayList<>();
        // dead letters are rare and read by people: one partition (as infra's Topics makes them)
        for (String name : names()) topics.add(TopicBuilder.name(name).partitions(name.endsWith(".dlq") ? 1 : partitions).replicas(replicas).build());
        return new KafkaAdmin.NewTopics(topics.toArray(NewTopic[]::new));
    }

    /** Every topic name the pipeline uses. */
    public static List<String> names() {
        List<String> names = new ArrayList<>();
        for (Stage s : Stage.values()) {
            if (!names.contains(s.inputTopic)) names.add(s.inputTopic);
            if (!names.contains(s.outputTopic)) names.add(s.outputTopic);
            names.add(s.dlqTopic());
        }
        names.add(Stage.JOB_EVENTS_TOPIC);
        return names;
    }
}
