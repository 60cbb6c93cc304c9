package dev.relayfarm.services.kit;

import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The tuning farm's topics (ARCHITECTURE.md section 3): tuner workers share {@link #TUNING_TASKS} as one consumer
 * group; each hardware agent consumes the measure requests of its device class ({@link #measureRequests}) in that
 * class's group, so a request goes to one agent and, when that agent dies before committing it, to another of the
 * class; results come back on {@link #MEASURE_RESULTS}, which every worker reads whole and keeps its own.
 */
public final class FarmTopics {
    public static final String TUNING_TASKS = "tuning.tasks";
    public static final String MEASURE_RESULTS = "measure.results";
    private static final String MEASURE_REQUESTS = "measure.requests.";
    static final int MIN_PARTITIONS = 12;

    private FarmTopics() {}

    /**
     * Partitions of the farm's topics: at least {@value #MIN_PARTITIONS}, since partitions bound how many workers'
     * task loops and how many agents of a class can work at once (a fourth agent on three partitions idles).
     */
    public static int partitions(int pipelinePartitions) {
        return Math.max(MIN_PARTITIONS, pipelinePartitions);
    }

    /** The topics that exist whatever devices join (the per-class request topics are made by the agents that serve them). */
    public static List<String> fixed() {
        return List.of(TUNING_TASKS, MEASURE_RESULTS);
    }

    /**
     * The message announcing task {@code taskId} on {@link #TUNING_TASKS}, sent once its row is committed: key the id (a
     * task's messages stay on one partition), value {@code {"taskId": N}} ({@code TuningTaskMessage}). The row is the
     * truth, the message only says "look at it", so a duplicate is harmless.
     */
    public static ProducerRecord<String, String> tuningTask(long taskId) {
        return new ProducerRecord<>(TUNING_TASKS, Long.toString(taskId), "{\"taskId\":" + taskId + "}");
    }

    /** The requests for devices of {@code deviceClass} ({@code cpu-x86_64-avx2-2c-3f9a2b1c}: characters Kafka accepts). */
    public static String measureRequests(String deviceClass) {
        if (!deviceClass.matches("[A-Za-z0-9._-]+")) throw new IllegalArgumentException("a device class names a topic: letters, digits, '.', '_' and '-' only, got '" + deviceClass + "'");
        return MEASURE_REQUESTS + deviceClass;
    }
}
