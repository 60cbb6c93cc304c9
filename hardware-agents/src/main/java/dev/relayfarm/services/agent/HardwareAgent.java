package dev.relayfarm.services.agent;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.serde.BlobStoreException;
import dev.relayfarm.services.farm.MeasureCandidate;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.farm.FarmConsumerLoop;
import dev.relayfarm.services.farm.FarmHost;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.MeasureRequest;
import dev.relayfarm.services.farm.MeasureResult;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.TopicsProperties;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.tuning.SimulatorMeasurer;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaLayerTasks;
import dev.relayfarm.vta.tuning.VtaTarget;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.kafka.KafkaProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * A hardware agent (ARCHITECTURE.md section 5): registers this host's device in {@code devices} (id
 * {@code HOST/NAME}, the class the library derives from the CPU), heartbeats, and measures what its class is asked
 * for on {@code measure.requests.<class>} with the library's sandboxed runner, reporting the batch's records on
 * {@code measure.results}. Everything it knows about measuring is the library's; this is the transport.
 *
 * <p>An FPGA agent ({@code relayfarm.agent.device-class=vta-sim-1x16x16}) registers that class instead, with the VTA
 * lowering as its compiler, and measures {@code vta-layer} requests: the layer is read from the module the request
 * names (the blob store) and its schedules run on the library's accelerator SIMULATOR ({@link SimulatorMeasurer}:
 * cycles as cost, checked bit for bit against the interpreter). No board is driven; the device's model says so.
 *
 * <p>Failure handling is the consumer group's ({@link FarmConsumerLoop}): a request is committed only after its
 * result was acknowledged by the broker, so after a SIGKILL the request goes to another agent of the class once the
 * session times out ({@link AgentProperties#sessionTimeout}) — a second measurement of it is possible (the result was
 * sent, the commit was not), a second record is not (the worker writes each request's records once). SIGTERM drains:
 * the batch in progress finishes and is reported, then the agent leaves the group and shows OFFLINE. An operator's
 * drain (DRAINING, seen at the next heartbeat) leaves the group once the batch in progress is reported.
 */
@Component
@ServiceRole(Stage.HARDWARE_AGENT)
@EnableConfigurationProperties(AgentProperties.class)
public class HardwareAgent implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(HardwareAgent.class);

    private final AgentProperties props;
    private final Devices devices;
    private final KafkaTemplate<String, String> kafka;
    private final KafkaProperties kafkaProperties;
    private final KafkaAdmin admin;
    private final TopicsProperties topics;
    private final IrStore ir;
    private final Device device;
    /** The simulated accelerator's configuration for an FPGA agent; null for a CPU agent. */
    private final VtaConfig vta;
    private final String id;
    private final Map<String, Optional<SandboxedRunner>> runners = new ConcurrentHashMap<>();
    private final Map<String, Object> capabilities = new LinkedHashMap<>();
    private volatile String status = "ONLINE";
    private volatile int inFlight;
    private volatile UUID inFlightRequest;
    private FarmConsumerLoop loop;
    private ScheduledExecutorService heartbeats;
    private volatile boolean running;
    private final SimulatorMeasurer simulator = new SimulatorMeasurer();
    private String lastIrRef;
    private List<VtaLayerTask> lastTasks = List.of();

    public HardwareAgent(AgentProperties props, Devices devices, KafkaTemplate<String, String> kafka, KafkaProperties kafkaProperties,
                         KafkaAdmin admin, TopicsProperties topics, IrStore ir) {
        this.props = props;
        this.ir = ir;
        String cls = props.deviceClass();
        if (cls.isEmpty() || cls.equals(Device.local().deviceClass())) {
            this.vta = null;
            this.device = Device.local();
        } else if (VtaTarget.CLASSES.contains(cls)) {
            this.vta = VtaTarget.configOf(cls);
            this.device = VtaTarget.device(vta);
        } else {
            throw new IllegalArgumentException("relayfarm.agent.device-class=" + cls + ": an agent measures this host's CPU (leave it unset, or "
                    + Device.local().deviceClass() + ") or a simulated accelerator (" + String.join(", ", VtaTarget.CLASSES) + ")");
        }
        this.devices = devices;
        this.kafka = kafka;
        this.kafkaProperties = kafkaProperties;
        this.admin = admin;
        this.topics = topics;
        this.id = FarmHost.name() + "/" + props.name();
    }

    /** The device id ({@code HOST/NAME}). */
    public String deviceId() {
        return id;
    }

    public Device device() {
        return device;
    }

    @Override
    public void start() {
        String compiler = compiler();
        if (vta != null) {
            capabilities.put("kind", "fpga");
            capabilities.put("simulated", true);
            capabilities.put("target", VtaTarget.target(vta));
        } else {
            capabilities.put("kind", "cpu");
            capabilities.put("cores", device.cores());
            capabilities.put("isa", device.isa());
            capabilities.put("measure", props.fast() ? "fast" : "default");
            capabilities.put("threads", props.threads());
        }
        String topic = FarmTopics.measureRequests(device.deviceClass());
        admin.createOrModifyTopics(TopicBuilder.name(topic).partitions(FarmTopics.partitions(topics.partitions())).replicas(topics.replicas()).build());
        devices.register(id, FarmHost.name(), device, compiler, ArtifactCompiler.VERSION, capabilities);
        heartbeats = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name("agent-heartbeat").daemon().unstarted(r));
        heartbeats.scheduleWithFixedDelay(this::heartbeat, props.heartbeat().toMillis(), props.heartbeat().toMillis(), TimeUnit.MILLISECONDS);
        loop = new FarmConsumerLoop("agent-" + props.name(), topic, "hardware-agents." + device.deviceClass(), kafkaProperties.buildConsumerProperties(null),
                props.sessionTimeout(), this::measure, () -> !"DRAINING".equals(status)).start();
        running = true;
        LOG.info("hardware agent {} registered: class {}, compiler {}, consuming {}", id, device.deviceClass(), compiler, topic);
    }

    private void heartbeat() {
        try {
            Optional<String> s = devices.heartbeat(id, inFlight, inFlightRequest);
            if (s.isEmpty()) {
                LOG.warn("device {} has no row any more; registering again", id);
                devices.register(id, FarmHost.name(), device, compiler(), ArtifactCompiler.VERSION, capabilities);
                return;
            }
            if (!s.get().equals(status)) LOG.info("device {} is now {}", id, s.get());
            status = s.get();
        } catch (RuntimeException e) {
            LOG.warn("heartbeat of {} failed: {}", id, e.toString());
        }
    }

    /** One request: measure it, report it, count it. An exception leaves it uncommitted (redelivered). */
    private void measure(ConsumerRecord<String, String> record, FarmConsumerLoop.Control control) throws Exception {
        try {
            measureOne(record, control);
        } finally {
            inFlight = 0;
            inFlightRequest = null;
        }
    }

    private void measureOne(ConsumerRecord<String, String> record, FarmConsumerLoop.Control control) throws Exception {
        MeasureRequest req;
        try {
            req = FarmMessages.read(record.value(), MeasureRequest.class);
        } catch (IllegalArgumentException e) {
            LOG.error("measure request at {}@{} is unreadable, skipped: {}", record.partition(), record.offset(), e.getMessage());
            return;
        }
        if (!req.deviceClass().equals(device.deviceClass())) {
            LOG.error("request {} is for class {}, this device is {}: skipped", req.requestId(), req.deviceClass(), device.deviceClass());
            return;
        }
        inFlight = req.candidates().size() + 1;
        inFlightRequest = req.requestId();
        devices.heartbeat(id, inFlight, inFlightRequest);
        Measured round = switch (req.reference()) {
            case MeasureCandidate.CKernel c -> vta != null ? refused(req, "this FPGA agent simulates VTA layers, not C kernels") : measureC(req);
            case MeasureCandidate.VtaLayer v -> vta == null ? refused(req, "this CPU agent builds C kernels, not VTA layers") : measureVta(req, v);
        };
        List<Measurement> measured = round.measured();
        boolean baselineFailed = round.baselineFailed();
        // another agent has it now (its result is the one written); a stopping agent still reports: that is its drain
        if (control.revoked()) return;
        List<String> records = TuningRecord.batch(measured, req.reference().config(), round.context(), Instant.now()).stream().map(TuningRecord::toJson).toList();
        MeasureResult result = new MeasureResult(req.requestId(), req.taskId(), req.workerId(), id, baselineFailed, records, Instant.now());
        kafka.send(FarmTopics.MEASURE_RESULTS, req.requestId().toString(), FarmMessages.write(result)).get(30, TimeUnit.SECONDS);
        Map<MeasureError, Integer> failures = new EnumMap<>(MeasureError.class);
        for (Measurement m : measured) if (m.outcome() instanceof Measurement.Failure f) failures.merge(f.error(), 1, Integer::sum);
        devices.reported(id, measured.size(), failures);
        LOG.info("measured request {} of task {}: {} configs, {} failed{}", req.requestId(), req.taskId(), measured.size(),
                failures.values().stream().mapToInt(Integer::intValue).sum(), baselineFailed ? " (the default failed)" : "");
    }

    /** What the agent registers as its compiler: the host's C compiler, or the VTA lowering for an FPGA agent. */
    private String compiler() {
        return vta != null ? VtaTarget.LOWERING : CCompiler.host().map(CCompiler::identity).orElse("none");
    }

    /** What a request gave: the default's measurement first, then one per candidate; only the default's when it failed. */
    private record Measured(List<Measurement> measured, boolean baselineFailed, RecordContext context) {}

    /** A CPU round: the library's sandboxed runner builds and times the C kernels the worker lowered. */
    private Measured measureC(MeasureRequest req) {
        Target target = Target.parse(req.target());
        SandboxedRunner runner = runners.computeIfAbsent(req.target(), t -> SandboxedRunner.forTarget(target, options())).orElse(null);
        RecordContext context = new RecordContext(req.target(), device, runner == null ? "none" : CCompiler.forTarget(target).orElseThrow().identity(),
                ArtifactCompiler.VERSION);
        List<Measurement> measured = new ArrayList<>();
        if (runner == null) {
            measured.add(new Measurement(req.reference().workloadKey(), req.reference().config(),
                    new Measurement.Failure(MeasureError.COMPILE_ERROR, "no C compiler for target " + req.target() + " on device " + id)));
            return new Measured(measured, true, context);
        }
        try {
            MeasuredBatch b = runner.measureCandidates(((MeasureCandidate.CKernel) req.reference()).candidate(),
                    req.candidates().stream().map(c -> ((MeasureCandidate.CKernel) c).candidate()).toList());
            measured.add(b.baseline());
            measured.addAll(b.results());
            return new Measured(measured, false, context);
        } catch (BaselineFailedException e) {
            measured.add(e.baseline());
            return new Measured(measured, true, context);
        }
    }

    /**
     * A VTA round: the layer of the request's workload in the module at {@code irRef} (read from the blob store, kept
     * for the next round of the same task), its schedules lowered and run on the SIMULATOR by the library's
     * {@link SimulatorMeasurer} (cycles, checked bit for bit against the interpreter).
     */
    private Measured measureVta(MeasureRequest req, MeasureCandidate.VtaLayer reference) {
        RecordContext context = VtaTarget.context(vta);
        if (!req.target().equals(context.target())) {
            return refused(req, "target \"" + req.target() + "\" is not this simulator's \"" + context.target() + "\"");
        }
        for (MeasureCandidate c : req.candidates()) {
            if (!c.workloadKey().equals(reference.workloadKey()) || !((MeasureCandidate.VtaLayer) c).irRef().equals(reference.irRef())) {
                return refused(req, "a candidate of another layer (" + c.workloadKey() + ") in a request for " + reference.workloadKey());
            }
        }
        Optional<VtaLayerTask> task;
        try {
            task = layerTask(reference.irRef(), reference.workloadKey());
        } catch (BlobStoreException | IllegalArgumentException e) { // not a stored module, or no @main: redelivering would not help
            return refused(req, "cannot read module " + reference.irRef() + ": " + e.getMessage());
        }
        if (task.isEmpty()) return refused(req, "module " + reference.irRef() + " has no VTA layer of workload " + reference.workloadKey());
        try {
            MeasuredBatch b = simulator.measureWithBaseline(task.get(), req.candidates().stream().map(MeasureCandidate::config).toList());
            List<Measurement> measured = new ArrayList<>();
            measured.add(b.baseline());
            measured.addAll(b.results());
            return new Measured(measured, false, context);
        } catch (BaselineFailedException e) {
            return new Measured(List.of(e.baseline()), true, context);
        }
    }

    /**
     * The layer task of {@code workloadKey} in the module at {@code irRef}. The last module's tasks are kept: a task's
     * rounds come one after another, and the same task object lets the simulator measurer keep its reference output.
     */
    private synchronized Optional<VtaLayerTask> layerTask(String irRef, String workloadKey) {
        if (!irRef.equals(lastIrRef)) {
            lastTasks = VtaLayerTasks.of(ir.read(irRef), vta);
            lastIrRef = irRef;
        }
        return lastTasks.stream().filter(t -> t.key().equals(workloadKey)).findFirst();
    }

    /** A request this agent cannot measure at all: its default's COMPILE_ERROR record says why, and the worker's task fails with it. */
    private Measured refused(MeasureRequest req, String why) {
        // under the request's target, where the worker looks for its task's records (a refusal for a target that is not
        // this agent's is still the task's record)
        RecordContext own = vta != null ? VtaTarget.context(vta) : new RecordContext(req.target(), device, compiler(), ArtifactCompiler.VERSION);
        RecordContext context = new RecordContext(req.target(), own.device(), own.compiler(), own.relayfarmVersion());
        return new Measured(List.of(new Measurement(req.reference().workloadKey(), req.reference().config(),
                new Measurement.Failure(MeasureError.COMPILE_ERROR, why + " (device " + id + ")"))), true, context);
    }

    private MeasureOptions options() {
        MeasureOptions o = props.fast() ? MeasureOptions.FAST : MeasureOptions.DEFAULT;
        return props.threads() > 0 ? o.withThreads(props.threads()) : o;
    }

    @Override
    public void stop() {
        running = false;
        if (loop != null) loop.close(props.drainTimeout());
        if (heartbeats != null) {
            heartbeats.shutdownNow();
            try {
                heartbeats.awaitTermination(5, TimeUnit.SECONDS); // a late heartbeat must not flip the device back ONLINE
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            devices.offline(id);
        } catch (RuntimeException e) {
            LOG.warn("could not mark {} OFFLINE on stop: {}", id, e.toString());
        }
        LOG.info("hardware agent {} stopped", id);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** After the stage consumers (which use the database and broker the same way), before the context's pools close. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 100;
    }
}
