package dev.relayfarm.infra;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real Kafka broker in this JVM: the broker and controller of Apache Kafka's own server jars
 * ({@code kafka_2.13}), one node in KRaft mode (combined roles, no ZooKeeper). Its storage is formatted
 * with Kafka's {@code kafka-storage format} tool on first start and kept in {@code dir}, so topics, messages
 * and consumer offsets survive a restart of the farm.
 *
 * <p>In-process rather than a child {@code java}: no second JVM start (about 2 s less on a small machine),
 * and Ctrl-C stops it in the order the farm chooses (services first, then the broker) instead of the
 * terminal's SIGINT reaching a child process at the same time as the services that still use it.
 */
public final class KafkaBroker implements AutoCloseable {
    private final KafkaRaftServer server;
    private final int port;

    private KafkaBroker(KafkaRaftServer server, int port) {
        this.server = server;
        this.port = port;
    }

    /** Formats {@code dir} if it is new, then starts the broker on localhost:{@code port} (controller on {@code controllerPort}). */
    public static KafkaBroker start(Path dir, int port, int controllerPort) throws IOException {
        Files.createDirectories(dir);
        Path logs = dir.resolve("logs");
        Properties props = new Properties();
        props.setProperty("process.roles", "broker,controller");
        props.setProperty("node.id", "1");
        props.setProperty("controller.quorum.voters", "1@localhost:" + controllerPort);
        props.setProperty("listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
        props.setProperty("advertised.listeners", "PLAINTEXT://localhost:" + port);
        props.setProperty("controller.listener.names", "CONTROLLER");
        props.setProperty("inter.broker.listener.name", "PLAINTEXT");
        props.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.setProperty("log.dirs", logs.toAbsolutePath().toString());
        // One node: every internal topic has one replica, and nothing waits for a second one.
        props.setProperty("offsets.topic.replication.factor", "1");
        props.setProperty("offsets.topic.num.partitions", "4");
        props.setProperty("transaction.state.log.replication.factor", "1");
        props.setProperty("transaction.state.log.min.isr", "1");
        props.setProperty("min.insync.replicas", "1");
        // A consumer group of one member need not wait 3 s for more members before its first assignment.
        props.setProperty("group.initial.rebalance.delay.ms", "0");
        // Pipeline messages are small (IR is stored by reference); a week of history is plenty for a local farm.
        props.setProperty("log.retention.hours", "168");
        props.setProperty("log.segment.bytes", String.valueOf(64 * 1024 * 1024));

        Path config = dir.resolve("server.properties");
        try (Writer w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
            props.store(w, "written by RelayFarm's LocalFarm on every start");
        }
        if (!Files.isRegularFile(logs.resolve("meta.properties"))) format(config, dir);

        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
        server.startup();
        return new KafkaBroker(server, port);
    }

    /** {@code kafka-storage format -t <new cluster id> -c server.properties}, Kafka's own tool, run in-process. */
    private static void format(Path config, Path dir) throws IOException {
        String clusterId = clusterId(dir);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc;
        try (PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            rc = StorageTool.execute(new String[] {"format", "-t", clusterId, "-c", config.toString(), "--ignore-formatted"}, ps);
        }
        if (rc != 0) {
            throw new IOException("kafka-storage format of " + dir + " failed (exit " + rc + "): " + out.toString(StandardCharsets.UTF_8).strip());
        }
    }

    /** The cluster id is chosen once per work folder and remembered beside the logs. */
    private static String clusterId(Path dir) throws IOException {
        Path file = dir.resolve("cluster-id");
        if (Files.isRegularFile(file)) {
            String id = Files.readString(file).strip();
            if (!id.isEmpty()) return id;
        }
        String id = Uuid.randomUuid().toString();
        Files.writeString(file, id + "\n");
        return id;
    }

    public String bootstrapServers() {
        return "localhost:" + port;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
    }
}
