package dev.relayfarm.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.services.kit.Stage;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher against the real things it starts: a broker that takes and returns messages, every topic, a
 * PostgreSQL with the services' Flyway tables, the services' HTTP port; a clean stop; and a second start on the
 * same work folder that finds the first one's messages and rows (the farm keeps its state between runs).
 */
class LocalFarmTest {
    @TempDir
    Path work;

    @Test
    void startsEverythingStopsCleanlyAndKeepsStateAcrossRestarts() throws Exception {
        FarmConfig config = FarmConfig.defaults(work).withFreePorts();
        String key = UUID.randomUUID().toString();
        try (LocalFarm farm = LocalFarm.start(config)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, farm.bootstrapServers()))) {
                Set<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                assertTrue(topics.containsAll(Stage.topicNames()), "missing topics: " + Stage.topicNames() + " vs " + topics);
                assertTrue(topics.contains(Stage.CODEGEN.dlqTopic()), topics.toString());
                assertEquals(FarmConfig.PARTITIONS, admin.describeTopics(Set.of(Stage.IMPORTER.inputTopic)).allTopicNames()
                        .get(30, TimeUnit.SECONDS).get(Stage.IMPORTER.inputTopic).partitions().size());
            }
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, farm.bootstrapServers(),
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
                p.send(new ProducerRecord<>(Stage.CODEGEN.dlqTopic(), key, "kept")).get(30, TimeUnit.SECONDS);
            }
            try (Connection c = DriverManager.getConnection(farm.jdbcUrl(), Postgres.USER, "");
                 Statement s = c.createStatement()) {
                // Flyway ran in the services: the farm's tables exist in the relayfarm database.
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('jobs','job_events','blobs','artifacts')")) {
                    rs.next();
                    assertEquals(4, rs.getInt(1));
                }
                s.execute("CREATE TABLE launcher_probe (v text)");
                s.execute("INSERT INTO launcher_probe VALUES ('" + key + "')");
            }
            try (Socket http = new Socket("localhost", config.gatewayPort())) {
                assertTrue(http.isConnected());
            }
            assertTrue(Files.readString(work.resolve("token")).contains(config.token()));
        }
        // Stopped: every port is free again.
        for (int port : new int[] {config.gatewayPort(), config.kafkaPort(), config.kafkaControllerPort(), config.postgresPort()}) {
            try (ServerSocket s = new ServerSocket(port)) {
                assertEquals(port, s.getLocalPort());
            }
        }

        try (LocalFarm again = LocalFarm.start(config.withRoles("importer"))) {
            try (Connection c = DriverManager.getConnection(again.jdbcUrl(), Postgres.USER, "");
                 Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT v FROM launcher_probe")) {
                assertTrue(rs.next());
                assertEquals(key, rs.getString(1));
            }
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, again.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, "launcher-test", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
                consumer.subscribe(Set.of(Stage.CODEGEN.dlqTopic()));
                String found = null;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (found == null && System.nanoTime() < deadline) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                    for (var r : records) if (r.key().equals(key)) found = r.value();
                }
                assertEquals("kept", found, "the message sent before the restart");
            }
        }
    }

    @Test
    void aTakenPortIsNamedBeforeAnythingStarts() throws Exception {
        FarmConfig config = FarmConfig.defaults(work).withFreePorts();
        try (ServerSocket taken = new ServerSocket(config.kafkaPort())) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> LocalFarm.start(config));
            assertTrue(e.getMessage().contains("port " + config.kafkaPort() + " for Kafka is already in use"), e.getMessage());
        }
    }
}
