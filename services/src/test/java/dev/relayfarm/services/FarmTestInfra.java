package dev.relayfarm.services;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * One real Kafka broker (KRaft) and one real PostgreSQL for all service tests of a JVM: each start costs
 * seconds, so they start on first use and stop when the JVM exits. Test classes register them with
 * {@code @DynamicPropertySource static void infra(DynamicPropertyRegistry r) { FarmTestInfra.register(r); }}.
 * Every test creates its own jobs (random ids), so tests sharing them do not see each other's state.
 */
public final class FarmTestInfra {
    private static EmbeddedKafkaKraftBroker kafka;
    private static EmbeddedPostgres postgres;

    private FarmTestInfra() {}

    public static synchronized String kafkaBootstrap() {
        if (kafka == null) {
            kafka = new EmbeddedKafkaKraftBroker(1, 3);
            kafka.afterPropertiesSet();
            Runtime.getRuntime().addShutdownHook(new Thread(kafka::destroy));
        }
        return kafka.getBrokersAsString();
    }

    public static synchronized String jdbcUrl() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    postgres.close();
                } catch (IOException ignored) {
                    // the JVM is exiting
                }
            }));
        }
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    public static void register(DynamicPropertyRegistry r) {
        r.add("spring.kafka.bootstrap-servers", FarmTestInfra::kafkaBootstrap);
        r.add("spring.datasource.url", FarmTestInfra::jdbcUrl);
        r.add("spring.datasource.username", () -> "postgres");
        r.add("spring.datasource.password", () -> "postgres");
    }
}
