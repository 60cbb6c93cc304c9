package dev.relayfarm.services.agent;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * A hardware agent's settings ({@code relayfarm.agent.*}).
 *
 * @param name           this agent's name on its host: the device id is {@code HOST/NAME}, stable across restarts, so
 *                       two agents on one host (one per device, or the tests' two) need two names
 * @param heartbeat      how often the agent tells the farm it is alive (the gateway marks it OFFLINE after missing a few)
 * @param sessionTimeout the Kafka group session: after a SIGKILL, how soon the agent's requests go to another agent
 * @param drainTimeout   on SIGTERM, how long the batch in progress may take to finish and be reported
 * @param fast           fewer, shorter repeats ({@code MeasureOptions.FAST}): for tests and smoke runs, not for schedules
 * @param threads        threads a measured kernel may use (0: the runner's default)
 * @param deviceClass    empty: this host's CPU, measured with its C compiler (the class the library derives from it);
 *                       {@code vta-sim-1x16x16}: an FPGA agent, whose device is the VTA-style accelerator SIMULATOR (no
 *                       board is driven: the records' device says so)
 */
@ConfigurationProperties("relayfarm.agent")
public record AgentProperties(@DefaultValue("cpu0") String name, @DefaultValue("2s") Duration heartbeat, @DefaultValue("6s") Duration sessionTimeout,
                              @DefaultValue("120s") Duration drainTimeout, @DefaultValue("false") boolean fast, @DefaultValue("0") int threads,
                              @DefaultValue("") String deviceClass) {}
