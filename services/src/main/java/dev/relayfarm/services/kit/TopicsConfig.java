package dev.relayfarm.services.kit;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaAdmin;

/**
 * The pipeline's topics ({@link Stage#topicNames}), created at start-up if missing; existing ones are left as they
 * are. Partitions bound how many consumers of one stage can work in parallel.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(TopicsProperties.class)
public class TopicsConfig {
    @Bean
    public KafkaAdmin.NewTopics relayfarmTopics(TopicsProperties props) {
        return new KafkaAdmin.NewTopics(Stage.topicNames().stream()
                .map(name -> TopicBuilder.name(name).partitions(Stage.partitions(name, props.partitions())).replicas(props.replicas()).build())
                .toArray(NewTopic[]::new));
    }
}
