package dev.relayfarm.infra;

import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.kit.Stage;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./relayfarm agent} and {@code ./relayfarm worker}: one more hardware agent or tuner worker as a process of its
 * own, joining a running farm through its broker and database (on this machine or another: {@code --bootstrap},
 * {@code --db}). No gateway, no web server. SIGTERM (Ctrl-C) stops it gracefully — an agent finishes and reports the
 * batch it is measuring, a worker stops after its round (its task resumes on another worker) — and SIGKILL is what
 * the farm is built to survive.
 */
abstract class FarmRoleCommand implements Callable<Integer> {
    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = "localhost:" + FarmConfig.KAFKA_PORT,
            description = "the farm's Kafka broker (default ${DEFAULT-VALUE}: the local farm's)")
    String bootstrap;

    @Option(names = "--db", paramLabel = "JDBC_URL", defaultValue = "jdbc:postgresql://localhost:" + FarmConfig.POSTGRES_PORT + "/" + Postgres.DATABASE,
            description = "the farm's PostgreSQL (default ${DEFAULT-VALUE})")
    String db;

    @Option(names = "--db-user", defaultValue = Postgres.USER, description = "PostgreSQL user (default ${DEFAULT-VALUE}; the password from $RELAYFARM_DB_PASSWORD)")
    String dbUser;

    @Option(names = "--log-dir", paramLabel = "DIR", description = "where its log goes (default: $RELAYFARM_HOME, else .relayfarm)")
    Path logDir;

    @Option(names = "--set", paramLabel = "PROPERTY=VALUE", description = "any other setting, e.g. --set relayfarm.tuner.concurrency=4")
    Map<String, String> extra = new LinkedHashMap<>();

    abstract String role();

    abstract Map<String, String> roleProperties();

    @Override
    public Integer call() throws InterruptedException {
        Path dir = logDir;
        if (dir == null) {
            String home = System.getenv("RELAYFARM_HOME");
            dir = home != null && !home.isBlank() ? Path.of(home) : Path.of(".relayfarm");
        }
        Path log = FarmLog.toFile(dir.resolve(role() + "-" + ProcessHandle.current().pid()));
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        Map<String, String> p = new LinkedHashMap<>();
        p.put("relayfarm.roles", role());
        p.put("spring.kafka.bootstrap-servers", bootstrap);
        p.put("spring.datasource.url", db);
        p.put("spring.datasource.username", dbUser);
        p.put("spring.datasource.password", System.getenv().getOrDefault("RELAYFARM_DB_PASSWORD", ""));
        p.put("spring.main.web-application-type", "none");
        p.put("spring.main.banner-mode", "off");
        p.put("spring.main.log-startup-info", "false");
        p.putAll(roleProperties());
        p.putAll(extra);
        String[] args = p.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(RelayFarmServices.class).run(args);
        System.out.println(role() + " running (pid " + ProcessHandle.current().pid() + ", broker " + bootstrap + ", database " + db + "); log: " + log);
        CountDownLatch closed = new CountDownLatch(1);
        ctx.addApplicationListener(e -> {
            if (e instanceof org.springframework.context.event.ContextClosedEvent) closed.countDown();
        });
        closed.await();
        return 0;
    }

    @Command(name = "agent", mixinStandardHelpOptions = true,
            description = {"Start one more hardware agent: registers this machine's CPU as a device, heartbeats, and measures",
                    "the candidate kernels its device class is sent. Two agents on one host need two --name values."})
    static final class Agent extends FarmRoleCommand {
        @Option(names = "--name", defaultValue = "cpu1", description = "the agent's name on this host; the device id is HOST/NAME (default ${DEFAULT-VALUE})")
        String name;

        @Option(names = "--fast", description = "short measurements (MeasureOptions.FAST): smoke tests, not schedules")
        boolean fast;

        @Option(names = "--threads", defaultValue = "0", description = "threads a measured kernel may use (default: the runner's)")
        int threads;

        @Option(names = "--device-class", defaultValue = "", paramLabel = "CLASS",
                description = "vta-sim-1x16x16: an FPGA agent measuring VTA layer schedules on the accelerator SIMULATOR (default: this host's CPU)")
        String deviceClass;

        @Override
        String role() {
            return Stage.HARDWARE_AGENT;
        }

        @Override
        Map<String, String> roleProperties() {
            return Map.of("relayfarm.agent.name", name, "relayfarm.agent.fast", Boolean.toString(fast), "relayfarm.agent.threads", Integer.toString(threads),
                    "relayfarm.agent.device-class", deviceClass);
        }
    }

    @Command(name = "worker", mixinStandardHelpOptions = true,
            description = "Start one more tuner worker: takes tuning tasks from the farm's queue and searches them with the farm's agents.")
    static final class Worker extends FarmRoleCommand {
        @Override
        String role() {
            return Stage.TUNER_WORKER;
        }

        @Override
        Map<String, String> roleProperties() {
            return Map.of();
        }
    }
}
