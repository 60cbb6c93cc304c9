package dev.relayfarm.infra;

import dev.relayfarm.services.kit.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * Creates the farm's topics ({@link Stage#topicNames}: each stage's input and output, its dead-letter topic, and
 * {@link Stage#JOB_EVENTS_TOPIC}) up front so no service depends on broker-side auto-creation and a
 * consumer that starts before the first producer still finds its topic.
 */
public final class Topics {
    private Topics() {}

    /**
     * Creates the topics that do not exist yet; returns how many it created. Pipeline topics get
     * {@code partitions} partitions (jobs are keyed by id, so partitions bound how many jobs one stage
     * works on at once); DLQs get one.
     */
    public static int create(String bootstrapServers, int partitions) throws InterruptedException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000))) {
            Set<String> existing = admin.listTopics().names().get(60, TimeUnit.SECONDS);
            List<NewTopic> missing = new ArrayList<>();
            for (String name : Stage.topicNames()) {
                if (existing.contains(name)) continue;
                missing.add(new NewTopic(name, Stage.partitions(name, partitions), (short) 1));
            }
            if (!missing.isEmpty()) admin.createTopics(missing).all().get(60, TimeUnit.SECONDS);
            return missing.size();
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("Kafka at " + bootstrapServers + ": cannot create the farm's topics: " + cause.getMessage(), cause);
        }
    }
}
