package dev.relayfarm.services.gateway;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * One real PostgreSQL (zonky embedded binaries) and one real Kafka broker (KRaft, in-JVM) for every gateway test
 * class in this JVM: each start costs seconds, and the Spring context that uses them is cached across classes.
 */
final class FarmTestInfra {
    private static EmbeddedPostgres postgres;
    private static EmbeddedKafkaKraftBroker kafka;

    private FarmTestInfra() {}

    static synchronized void register(DynamicPropertyRegistry registry) {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start", e);
            }
            kafka = new EmbeddedKafkaKraftBroker(1, 1, "compile.requested", "job.events");
            kafka.afterPropertiesSet();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                kafka.destroy();
                try {
                    postgres.close();
                } catch (IOException e) {
                    // the JVM is exiting; the data directory is temporary
                }
            }));
        }
        registry.add("spring.datasource.url", () -> postgres.getJdbcUrl("postgres", "postgres"));
        registry.add("spring.datasource.username", () -> "postgres");
        registry.add("spring.datasource.password", () -> "postgres");
        registry.add("spring.kafka.bootstrap-servers", kafka::getBrokersAsString);
    }

    static String brokers() {
        return kafka.getBrokersAsString();
    }
}
