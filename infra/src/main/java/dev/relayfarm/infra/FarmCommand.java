package dev.relayfarm.infra;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./relayfarm up | demo [--exit] | agent | worker}: the local farm, the demo job run against it, and one more agent or worker for it. */
@Command(name = "relayfarm", mixinStandardHelpOptions = true, subcommands = {FarmCommand.Up.class, FarmCommand.Demo.class, FarmRoleCommand.Agent.class, FarmRoleCommand.Worker.class},
        description = "The RelayFarm compile farm on this machine: a Kafka broker, PostgreSQL and every service in one process.")
public final class FarmCommand {

    /** Options both commands share: where the farm lives and which ports it takes. */
    static final class FarmOptions {
        @Option(names = "--work-dir", paramLabel = "DIR", description = "Kafka logs, PostgreSQL data and binaries (default: $RELAYFARM_HOME, else .relayfarm in the repository)")
        Path workDir;

        @Option(names = "--gateway-port", defaultValue = "" + FarmConfig.GATEWAY_PORT, description = "REST API port (default ${DEFAULT-VALUE})")
        int gatewayPort;

        @Option(names = "--kafka-port", defaultValue = "" + FarmConfig.KAFKA_PORT, description = "Kafka broker port (default ${DEFAULT-VALUE}; the controller takes the next one)")
        int kafkaPort;

        @Option(names = "--postgres-port", defaultValue = "" + FarmConfig.POSTGRES_PORT, description = "PostgreSQL port (default ${DEFAULT-VALUE})")
        int postgresPort;

        @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = FarmConfig.BIND_ADDRESS,
                description = "interface the REST API listens on (default ${DEFAULT-VALUE}: this machine only; 0.0.0.0: every interface)")
        String bind;

        @Option(names = "--roles", defaultValue = "all", description = "services to run: all, or a comma list of gateway, importer, type-inference, optimizer, autotuner, codegen, tuner-worker, hardware-agent (default ${DEFAULT-VALUE})")
        String roles;

        FarmConfig config() {
            Path dir = workDir;
            if (dir == null) {
                String home = System.getenv("RELAYFARM_HOME");
                dir = home != null && !home.isBlank() ? Path.of(home) : Path.of(".relayfarm");
            }
            return FarmConfig.defaults(dir).withPorts(gatewayPort, kafkaPort, kafkaPort + 1, postgresPort).withRoles(roles).withBindAddress(bind);
        }
    }

    /** Starts the farm (its log in the work folder, warnings on the terminal), registers the Ctrl-C hook, and returns it. */
    static LocalFarm startWithShutdownHook(FarmConfig config, CountDownLatch stopped) {
        Path log = FarmLog.toFile(config.workDir());
        System.out.println("starting the farm (Kafka, PostgreSQL, services; the first start unpacks PostgreSQL: up to a minute)");
        System.out.println("  log: " + log + "   (warnings also here)");
        LocalFarm farm = LocalFarm.start(config);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            farm.close();
            stopped.countDown();
        }, "relayfarm-shutdown"));
        return farm;
    }

    @Command(name = "up", mixinStandardHelpOptions = true, description = "Start the farm and keep it running until Ctrl-C.")
    static final class Up implements Callable<Integer> {
        @Mixin
        FarmOptions options = new FarmOptions();

        @Override
        public Integer call() throws InterruptedException {
            CountDownLatch stopped = new CountDownLatch(1);
            LocalFarm farm = startWithShutdownHook(options.config(), stopped);
            farm.printSummary(System.out);
            System.out.println("Ctrl-C stops the farm.");
            stopped.await();
            return 0;
        }
    }

    @Command(name = "demo", mixinStandardHelpOptions = true,
            description = {"Start the farm, compile PaddleOCR's MobileNetV3 text-direction classifier through the REST API,",
                    "follow the job stage by stage, download the artifact, run it and compare it with ONNX Runtime."})
    static final class Demo implements Callable<Integer> {
        @Mixin
        FarmOptions options = new FarmOptions();

        @Option(names = "--exit", description = "stop the farm after the demo (default: keep it running until Ctrl-C)")
        boolean exit;

        @Option(names = "--threads", defaultValue = "1", description = "threads for both engines when timing (default ${DEFAULT-VALUE})")
        int threads;

        @Override
        public Integer call() throws Exception {
            CountDownLatch stopped = new CountDownLatch(1);
            LocalFarm farm = startWithShutdownHook(options.config(), stopped);
            farm.printSummary(System.out);
            int rc = new DemoClient(new FarmClient(farm.gatewayUrl(), farm.token()), options.config().workDir().resolve("demo"), threads, System.out).run();
            if (exit) {
                farm.close();
                return rc;
            }
            System.out.println("The farm keeps running; Ctrl-C stops it.");
            stopped.await();
            return rc;
        }
    }

    public static void main(String[] args) {
        int rc = new CommandLine(new FarmCommand()).execute(args);
        System.exit(rc);
    }
}
