package dev.relayfarm.infra;

import dev.relayfarm.services.kit.Stage;
import java.util.ArrayList;
import java.util.LinkedHashSet;
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
 * The farm's topics, taken from {@link Stage} (each stage's input and output, its dead-letter topic) plus
 * {@link Stage#JOB_EVENTS_TOPIC}. Created up front so no service depends on broker-side auto-creation and a
 * consumer that starts before the first producer still finds its topic.
 */
public final class Topics {
    private Topics() {}

    /** Every topic name, pipeline order first. */
    public static List<String> names() {
        Set<String> names = new LinkedHashSet<>();
        for (Stage s : Stage.values()) {
            names.add(s.inputTopic);
            names.add(s.outputTopic);
        }
        names.add(Stage.JOB_EVENTS_TOPIC);
        for (Stage s : Stage.values()) names.add(s.dlqTopic());
        return List.copyOf(names);
    }

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
            for (String name : names()) {
                if (existing.contains(name)) continue;
                missing.add(new NewTopic(name, name.endsWith(".dlq") ? 1 : partitions, (short) 1));
            }
            if (!missing.isEmpty()) admin.createTopics(missing).all().get(60, TimeUnit.SECONDS);
            return missing.size();
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("Kafka at " + bootstrapServers + ": cannot create the farm's topics: " + cause.getMessage(), cause);
        }
    }
}
