package dev.relayfarm.services.kit;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;

/**
 * The {@value #NAME} topic: one message per tuning task to work on, sent once its row is committed (by the gateway's
 * tuning runs, the autotuner stage), consumed by tuner workers. Key: the task id as a decimal string (a task's
 * messages stay on one partition); value: {@code {"taskId": <id>}}. The row in {@code tuning_tasks} is the truth; the
 * message only says "look at it", so a duplicate is harmless. Created at start-up if missing, like the pipeline's
 * topics ({@link TopicsConfig}).
 */
@Configuration(proxyBeanMethods = false)
public class TuningTasksTopic {
    public static final String NAME = "tuning.tasks";

    /** The message announcing task {@code taskId}. */
    public static ProducerRecord<String, String> record(long taskId) {
        return new ProducerRecord<>(NAME, Long.toString(taskId), "{\"taskId\":" + taskId + "}");
    }

    @Bean
    public NewTopic tuningTasksTopicDefinition(TopicsProperties props) {
        return TopicBuilder.name(NAME).partitions(props.partitions()).replicas(props.replicas()).build();
    }
}
