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
 * @param tokenGenerated true when the farm made the token up, now or on an earlier start (then it is printed at start-up)
 * @param partitions     partitions of each pipeline topic
 * @param roles          the services this process runs ({@code all}, or a comma list; see {@code relayfarm.roles})
 * @param properties     extra Spring properties for the services (tests tune timeouts with them)
 * @param bindAddress    the interface the gateway listens on: {@value #BIND_ADDRESS} (this machine only) unless opened
 *                       with {@code --bind 0.0.0.0}
 */
public record FarmConfig(Path workDir, int gatewayPort, int kafkaPort, int kafkaControllerPort, int postgresPort,
                         String token, boolean tokenGenerated, int partitions, String roles, Map<String, String> properties, String bindAddress) {
    public static final String BIND_ADDRESS = "127.0.0.1";
    public static final int GATEWAY_PORT = 8080;
    public static final int KAFKA_PORT = 19092;
    public static final int KAFKA_CONTROLLER_PORT = 19093;
    public static final int POSTGRES_PORT = 15432;
    public static final int PARTITIONS = 4;

    public FarmConfig {
        properties = Map.copyOf(properties);
    }

    /**
     * The fixed ports; the token from {@code RELAYFARM_TOKEN}, else the one an earlier start generated and kept in
     * {@code <workDir>/token} (scripts and shells that read it keep working across restarts), else a fresh random one.
     */
    public static FarmConfig defaults(Path workDir) {
        String fromEnv = System.getenv("RELAYFARM_TOKEN");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new FarmConfig(workDir, GATEWAY_PORT, KAFKA_PORT, KAFKA_CONTROLLER_PORT, POSTGRES_PORT, fromEnv.strip(), false, PARTITIONS, "all", Map.of(),
                    BIND_ADDRESS);
        }
        return new FarmConfig(workDir, GATEWAY_PORT, KAFKA_PORT, KAFKA_CONTROLLER_PORT, POSTGRES_PORT, keptToken(workDir).orElseGet(FarmConfig::newToken), true,
                PARTITIONS, "all", Map.of(), BIND_ADDRESS);
    }

    /** The token an earlier start wrote to {@code <workDir>/token}, if there is one. */
    static java.util.Optional<String> keptToken(Path workDir) {
        Path file = workDir.resolve("token");
        try {
            if (!java.nio.file.Files.isRegularFile(file)) return java.util.Optional.empty();
            String t = java.nio.file.Files.readString(file).strip();
            return t.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(t);
        } catch (IOException e) {
            return java.util.Optional.empty(); // unreadable: a new token is written over it
        }
    }

    public static String newToken() {
        byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        return "rf_" + HexFormat.of().formatHex(b);
    }

    /** Every port replaced by one the OS reports free right now (tests run beside a farm on the fixed ports). */
    public FarmConfig withFreePorts() {
        return new FarmConfig(workDir, freePort(), freePort(), freePort(), freePort(), token, tokenGenerated, partitions, roles, properties, bindAddress);
    }

    public FarmConfig withPorts(int gateway, int kafka, int kafkaController, int postgres) {
        return new FarmConfig(workDir, gateway, kafka, kafkaController, postgres, token, tokenGenerated, partitions, roles, properties, bindAddress);
    }

    public FarmConfig withRoles(String roles) {
        return new FarmConfig(workDir, gatewayPort, kafkaPort, kafkaControllerPort, postgresPort, token, tokenGenerated, partitions, roles, properties, bindAddress);
    }

    /** The gateway's listening interface ({@code 0.0.0.0}: every interface). */
    public FarmConfig withBindAddress(String address) {
        return new FarmConfig(workDir, gatewayPort, kafkaPort, kafkaControllerPort, postgresPort, token, tokenGenerated, partitions, roles, properties, address);
    }

    public FarmConfig withProperty(String key, String value) {
        Map<String, String> p = new LinkedHashMap<>(properties);
        p.put(key, value);
        return new FarmConfig(workDir, gatewayPort, kafkaPort, kafkaControllerPort, postgresPort, token, tokenGenerated, partitions, roles, p, bindAddress);
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
