package dev.relayfarm.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where the local farm puts its pieces. The defaults are fixed so the README's URLs and a user's scripts
 * keep working across restarts; they stay clear of the usual ports of a system PostgreSQL (5432) and Kafka
 * (9092/9093). Tests use {@link #withFreePorts()}.
 *
 * @param workDir        Kafka's log folder, PostgreSQL's data folder and binaries, the token file
 * @param token          the REST bearer token the gateway accepts
 * @param tokenGenerated true when the farm made the token up (then it is printed at start-up)
 * @param partitions     partitions of each pipeline topic
 * @param roles          the services this process runs ({@code all}, or a comma list; see {@code relayfarm.roles})
 * @param properties     extra Spring properties for the services (tests tune timeouts with them)
 */
public record FarmConfig(Path workDir, int gatewayPort, int kafkaPort, int kafkaControllerPort, int postgresPort,
                         String token, boolean tokenGenerated, int partitions, String roles, Map<String, String> properties) {
    public static final int GATEWAY_PORT = 8080;
    public static final int KAFKA_PORT = 19092;
    public static final int KAFKA_CONTROLLER_PORT = 19093;
    public static final int POSTGRES_PORT = 15432;
    public static final int PARTITIONS = 4;

    public FarmConfig {
        properties = Map.copyOf(properties);
    }

    /** The fixed ports; the token from {@code RELAYFARM_TOKEN} or a fresh random one. */
    public static FarmConfig defaults(Path workDir) {
        String fromEnv = System.getenv("RELAYFARM_TOKEN");
        boolean generate = fromEnv == null || fromEnv.isBlank();
        return new FarmConfig(workDir, GATEWAY_PORT, KAFKA_PORT, KAFKA_CONTROLLER_PORT, POSTGRES_PORT,
                generate ? newToken() : fromEnv.strip(), generate, PARTITIONS, "all", Map.of());
    }

    public static String newToken() {
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        return "rf_" + HexFormat.of().formatHex(b);
    }

    /** Every port replaced by one the OS reports free right now (tests run beside a farm on the fixed ports). */
    public FarmConfig withFreePorts() {
        return new FarmConfig(workDir, freePort(), freePort(), freePort(), freePort(), token, tokenGenerated, partitions, roles, properties);
    }

    public FarmConfig withPorts(int gateway, int kafka, int kafkaController, int postgres) {
        return new FarmConfig(workDir, gateway, kafka, kafkaController, postgres, token, tokenGenerated, partitions, roles, properties);
    }

    public FarmConfig withRoles(String roles) {
        return new FarmConfig(workDir, gatewayPort, kafkaPort, kafkaControllerPort, postgresPort, token, tokenGenerated, partitions, roles, properties);
    }

    public FarmConfig withProperty(String key, String value) {
        Map<String, String> p = new LinkedHashMap<>(properties);
        p.put(key, value);
        return new FarmConfig(workDir, gatewayPort, kafkaPort, kafkaControllerPort, postgresPort, token, tokenGenerated, partitions, roles, p);
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free local port: " + e.getMessage(), e);
        }
    }
}
