package dev.relayfarm.infra;

import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.kit.Stage;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The whole farm in one JVM: a real Kafka broker (KRaft, {@link KafkaBroker}), a real PostgreSQL
 * ({@link Postgres}), the pipeline's topics ({@link Topics}), then {@link RelayFarmServices} with the
 * configured roles wired to both. {@link #close()} stops them in reverse order: services (so no consumer
 * sees its broker vanish mid-poll), broker, PostgreSQL. {@code ./relayfarm up} runs {@link FarmCommand}, which
 * calls {@link #start} and closes the farm from a shutdown hook on Ctrl-C.
 */
public final class LocalFarm implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LocalFarm.class);

    private final FarmConfig config;
    private final List<ConfigurableApplicationContext> extraServices = new ArrayList<>();
    private Postgres postgres;
    private KafkaBroker kafka;
    private ConfigurableApplicationContext services;
    private boolean closed;

    private LocalFarm(FarmConfig config) {
        this.config = config;
    }

    /** Starts everything; on any failure stops what already started and rethrows. */
    public static LocalFarm start(FarmConfig config) {
        LocalFarm farm = new LocalFarm(config);
        try {
            farm.startAll();
            return farm;
        } catch (RuntimeException | Error e) {
            farm.close();
            throw e;
        }
    }

    private void startAll() {
        // The broker logs from its own threads while Spring would reset logback for its logging system; the
        // farm's logback.xml already configures everything, so Spring leaves logging alone.
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
        long t0 = System.nanoTime();
        Path work = config.workDir().toAbsolutePath();
        try {
            Files.createDirectories(work);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the farm's work folder " + work + ": " + e.getMessage(), e);
        }
        requireFree("PostgreSQL", config.postgresPort());
        requireFree("Kafka", config.kafkaPort());
        requireFree("Kafka controller", config.kafkaControllerPort());
        if (config.roles().contains("gateway") || config.roles().contains("all")) requireFree("the gateway", config.gatewayPort());

        long t = System.nanoTime();
        try {
            postgres = Postgres.start(work.resolve("postgres"), config.postgresPort());
        } catch (IOException e) {
            throw new UncheckedIOException("PostgreSQL did not start on port " + config.postgresPort() + ": " + e.getMessage(), e);
        }
        log.info("PostgreSQL {} started in {}  (data: {})", postgres.jdbcUrl(), seconds(t), work.resolve("postgres/data"));

        t = System.nanoTime();
        try {
            kafka = KafkaBroker.start(work.resolve("kafka"), config.kafkaPort(), config.kafkaControllerPort());
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka did not start on port " + config.kafkaPort() + ": " + e.getMessage(), e);
        }
        log.info("Kafka broker (KRaft, broker+controller) on {} started in {}  (logs: {})", kafka.bootstrapServers(), seconds(t), work.resolve("kafka/logs"));

        t = System.nanoTime();
        int created;
        try {
            created = Topics.create(kafka.bootstrapServers(), config.partitions());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        }
        log.info("Topics: {} ({} created, {} partitions each pipeline topic) in {}", Stage.topicNames().size(), created, config.partitions(), seconds(t));

        writeToken(work.resolve("token"), config.token());
        t = System.nanoTime();
        services = startServices(config.roles(), config.gatewayPort());
        log.info("Services [{}] started in {}", config.roles(), seconds(t));
        log.info("Local farm up in {}", seconds(t0));
    }

    /**
     * Starts {@link RelayFarmServices} with {@code roles} against this farm's broker and database, as a
     * second process would (its own Spring context, own consumers, own connection pool). The e2e tests run
     * one stage this way to stop and restart it while a job is in it. Closed with the farm unless closed before.
     */
    public ConfigurableApplicationContext startServices(String roles, int httpPort) {
        return startServices(roles, httpPort, Map.of());
    }

    /** {@link #startServices(String, int)} with extra Spring properties for this context only. */
    public ConfigurableApplicationContext startServices(String roles, int httpPort, Map<String, String> extra) {
        Map<String, String> props = springProperties(roles, httpPort);
        props.putAll(extra);
        // As command-line arguments: those outrank the services' application.properties (default properties do not).
        String[] args = props.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(RelayFarmServices.class)
                // The farm stops the services itself, before the broker and the database they use.
                .registerShutdownHook(false)
                .run(args);
        if (services != null) extraServices.add(ctx);
        return ctx;
    }

    /** What the services are told about this farm (Spring property names). */
    public Map<String, String> springProperties(String roles, int httpPort) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("relayfarm.roles", roles);
        p.put("relayfarm.token", config.token());
        p.put("relayfarm.work-dir", config.workDir().toAbsolutePath().toString());
        p.put("server.port", Integer.toString(httpPort));
        p.put("server.address", config.bindAddress());
        p.put("spring.kafka.bootstrap-servers", kafka.bootstrapServers());
        p.put("spring.datasource.url", postgres.jdbcUrl());
        p.put("spring.datasource.username", Postgres.USER);
        p.put("spring.datasource.password", "");
        p.put("spring.main.banner-mode", "off");
        p.put("spring.main.log-startup-info", "false");
        p.putAll(config.properties());
        return p;
    }

    /**
     * The kept token (this module owns it: {@link FarmConfig#defaults} reads it, the services only get
     * {@code relayfarm.token}). Written to a temporary file created owner-only (rw-------) from the start, then moved
     * over the old one atomically: the token is never readable by others, not even for a moment, and a reader never
     * sees half a file.
     */
    static void writeToken(Path file, String token) {
        try {
            Path tmp;
            try {
                tmp = Files.createTempFile(file.getParent(), ".token-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException e) {
                // Not a POSIX file system: the file gets the folder's default permissions.
                tmp = Files.createTempFile(file.getParent(), ".token-", ".tmp");
            }
            try {
                Files.writeString(tmp, token + "\n");
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Fails fast with the port's owner named, instead of a bind error deep inside Kafka or Tomcat. */
    private static void requireFree(String what, int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("localhost", port));
        } catch (BindException e) {
            throw new IllegalStateException("port " + port + " for " + what + " is already in use (another farm running?"
                    + " stop it, or choose other ports: ./relayfarm up --help)");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot check port " + port + ": " + e.getMessage(), e);
        }
    }

    static String seconds(long startNanos) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }

    public FarmConfig config() {
        return config;
    }

    public String gatewayUrl() {
        return "http://localhost:" + config.gatewayPort();
    }

    public String token() {
        return config.token();
    }

    public String bootstrapServers() {
        return kafka.bootstrapServers();
    }

    public String jdbcUrl() {
        return postgres.jdbcUrl();
    }

    public ConfigurableApplicationContext services() {
        return services;
    }

    /** Prints where everything is, for a person at the terminal. */
    public void printSummary(PrintStream out) {
        out.println();
        out.println("RelayFarm local farm is up:");
        out.println("  dashboard    " + gatewayUrl() + "/ui   (log in with the token below)");
        out.println("  REST API     " + gatewayUrl() + "/api/v1/jobs   (OpenAPI: " + gatewayUrl() + "/api/v1/openapi.json; health: " + gatewayUrl()
                + "/api/v1/health)");
        out.println("  listening on " + config.bindAddress() + (config.bindAddress().equals(FarmConfig.BIND_ADDRESS)
                ? "   (this machine only; --bind 0.0.0.0 opens it to the network)" : ""));
        if (config.tokenGenerated()) {
            out.println("  token        " + config.token() + "   (generated on the first start and kept in " + config.workDir().resolve("token")
                    + "; set RELAYFARM_TOKEN to choose one)");
        } else {
            out.println("  token        from RELAYFARM_TOKEN");
        }
        out.println("  Kafka        " + bootstrapServers() + "   (KRaft broker+controller; topics: " + String.join(", ", Stage.topicNames()) + ")");
        out.println("  PostgreSQL   " + jdbcUrl() + "   (user " + Postgres.USER + ", no password)");
        out.println("  services     " + config.roles());
        out.println("  work folder  " + config.workDir().toAbsolutePath());
        out.println("  try:  curl -H 'Authorization: Bearer " + (config.tokenGenerated() ? config.token() : "$RELAYFARM_TOKEN") + "' "
                + gatewayUrl() + "/api/v1/jobs");
        out.println();
    }

    /** Stops services, then the broker, then PostgreSQL; safe to call twice (Ctrl-C during a failed start). */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        long t = System.nanoTime();
        for (ConfigurableApplicationContext ctx : extraServices.reversed()) closeQuietly("services", ctx::close);
        if (services != null) closeQuietly("services", services::close);
        if (kafka != null) closeQuietly("Kafka broker", kafka::close);
        if (postgres != null) closeQuietly("PostgreSQL", postgres::close);
        log.info("Local farm stopped in {}", seconds(t));
    }

    private static void closeQuietly(String what, AutoCloseable c) {
        try {
            c.close();
            log.info("{} stopped", what);
        } catch (Exception e) {
            log.warn("{} did not stop cleanly: {}", what, e.toString());
        }
    }
}
