package dev.relayfarm.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.infra.FarmClient;
import dev.relayfarm.infra.FarmConfig;
import dev.relayfarm.infra.LocalFarm;
import dev.relayfarm.infra.Postgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The farm the e2e suite runs against, started once per test JVM ({@link E2eFarmExtension}): the infra module's
 * {@link LocalFarm} on free ports in a temporary work folder — a real Kafka broker, a real PostgreSQL — with
 * every service except codegen in the farm's own context, and codegen in a second Spring context as a separate
 * service process would be, so {@link StageRestartTest} can stop and start it while a job is in it.
 */
public final class E2eFarm implements AutoCloseable {
    /** The stage that runs in its own context (the slowest one: gcc runs there, so a job is easy to catch in it). */
    public static final String SEPARATE_ROLE = "codegen";
    static final String FARM_ROLES = "gateway,importer,type-inference,optimizer,autotuner";
    /** Tokens with one role each besides the farm's admin token (relayfarm.tokens): the role checks are exercised end to end. */
    static final String REVIEWER_TOKEN = "rf_e2e_reviewer_" + java.util.UUID.randomUUID();
    static final String SUBMITTER_TOKEN = "rf_e2e_submitter_" + java.util.UUID.randomUUID();

    public final LocalFarm farm;
    public final FarmClient client;
    public final Path work;
    private ConfigurableApplicationContext separate;

    private E2eFarm(LocalFarm farm, Path work) {
        this.farm = farm;
        this.work = work;
        this.client = new FarmClient(farm.gatewayUrl(), farm.token());
    }

    static E2eFarm start() {
        Path work;
        try {
            work = Files.createTempDirectory("relayfarm-e2e-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        LocalFarm farm = LocalFarm.start(FarmConfig.defaults(work).withFreePorts().withRoles(FARM_ROLES)
                .withProperty("relayfarm.tokens", "reviewer1:reviewer:" + REVIEWER_TOKEN + ",submitter1:submitter:" + SUBMITTER_TOKEN));
        E2eFarm f = new E2eFarm(farm, work);
        f.startSeparateStage();
        return f;
    }

    /** Starts the separate stage's context (again, after {@link #stopSeparateStage}). */
    public synchronized void startSeparateStage() {
        startSeparateStage(Map.of());
    }

    /** Starts the separate stage's context with extra Spring properties (a lower compile timeout, say). */
    public synchronized void startSeparateStage(Map<String, String> extra) {
        if (separate != null) throw new IllegalStateException(SEPARATE_ROLE + " is already running");
        // Closing the context interrupts the message in progress after 10 ms instead of letting it finish (the
        // kit's default waits several seconds): closing it is then a kill in the middle of the stage's work.
        Map<String, String> props = new LinkedHashMap<>(Map.of("relayfarm.stage.shutdown-timeout", "10ms"));
        props.putAll(extra);
        separate = farm.startServices(SEPARATE_ROLE, 0, props);
    }

    /** Stops the separate stage and starts it again with {@code extra} properties (none: the defaults). */
    public synchronized void restartSeparateStage(Map<String, String> extra) {
        stopSeparateStage();
        startSeparateStage(extra);
    }

    /** Closes the separate stage's context: its consumers leave the group, its connections close. */
    public synchronized void stopSeparateStage() {
        if (separate == null) throw new IllegalStateException(SEPARATE_ROLE + " is not running");
        separate.close();
        separate = null;
    }

    /** Submits a model file with the default target and -O3; {@code shapes} may be empty. */
    public String submit(Path model, String shapes) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("target", "c -mcpu=native");
        fields.put("opt_level", "3");
        if (!shapes.isEmpty()) fields.put("shapes", shapes);
        try {
            return client.submit(model, fields);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String submit(String fileName, byte[] bytes) {
        return client.submit(fileName, bytes, Map.of("target", "c -mcpu=native", "opt_level", "3"));
    }

    public JsonNode await(String id) {
        try {
            return client.await(id, Duration.ofMinutes(5), j -> {});
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@code ./relayfarm agent|worker} as a process of its own (a separate JVM on this test's class path) joined to this
     * farm, its output in {@code <work>/COMMAND-NAME.out}: what the tuning farm's tests SIGKILL.
     */
    public Process startFarmProcess(String command, String name, String... extra) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "dev.relayfarm.infra.FarmCommand", command, "--bootstrap", farm.bootstrapServers(), "--db", farm.jdbcUrl(), "--log-dir", work.toString()));
        cmd.addAll(List.of(extra));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(work.resolve(command + "-" + name + ".out").toFile()).start();
    }

    /** The first column of every row {@code sql} returns, as text. */
    public List<String> rows(String sql) {
        try (Connection c = db(); PreparedStatement q = c.prepareStatement(sql); ResultSet rs = q.executeQuery()) {
            List<String> out = new ArrayList<>();
            while (rs.next()) out.add(rs.getString(1));
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /** The first column of {@code sql}'s first row, as text; null when there is none. */
    public String text(String sql) {
        List<String> r = rows(sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    public Connection db() throws SQLException {
        return DriverManager.getConnection(farm.jdbcUrl(), Postgres.USER, "");
    }

    /** A single number from the database, e.g. a count for one job. */
    public long count(String sql, String jobId) {
        try (Connection c = db(); PreparedStatement q = c.prepareStatement(sql)) {
            q.setObject(1, UUID.fromString(jobId));
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /** What the stages recorded for a job: (stage, work ms, wait ms before the stage started). */
    public record StageTiming(String stage, long workMs, long waitMs) {}

    public List<StageTiming> stageTimings(String jobId) {
        String sql = """
                SELECT stage, duration_ms,
                       (EXTRACT(EPOCH FROM started_at - COALESCE(lag(finished_at) OVER (ORDER BY started_at),
                                                                (SELECT created_at FROM jobs WHERE id = ?))) * 1000)::bigint
                FROM stage_results WHERE job_id = ? ORDER BY started_at""";
        List<StageTiming> out = new ArrayList<>();
        try (Connection c = db(); PreparedStatement q = c.prepareStatement(sql)) {
            q.setObject(1, UUID.fromString(jobId));
            q.setObject(2, UUID.fromString(jobId));
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) out.add(new StageTiming(rs.getString(1), rs.getLong(2), rs.getLong(3)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("stage timings of " + jobId + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * Waits until consumer group {@code group} has committed every message of {@code topic} (no lag): after a
     * restart, the message that was in progress has then been handled again, whichever way.
     */
    public void awaitNoLag(String group, String topic, Duration timeout) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, farm.bootstrapServers()))) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                var parts = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
                Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                for (var p : parts) latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
                long lag = 0;
                for (var e : admin.listOffsets(latest).all().get().entrySet()) {
                    OffsetAndMetadata c = committed.get(e.getKey());
                    lag += e.getValue().offset() - (c == null ? 0 : c.offset());
                }
                if (lag == 0) return;
                if (System.nanoTime() > deadline) throw new IllegalStateException(group + " still has " + lag + " uncommitted messages on " + topic);
                Thread.sleep(200);
            }
        }
    }

    /** Submission to SUCCEEDED/FAILED as the database saw it, in ms. */
    public long endToEndMs(String jobId) {
        return count("SELECT (EXTRACT(EPOCH FROM finished_at - created_at) * 1000)::bigint FROM jobs WHERE id = ?", jobId);
    }

    @Override
    public void close() {
        farm.close();
    }
}
