package dev.relayfarm.services.tuner;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.MeasureCandidate;
import dev.relayfarm.services.farm.MeasureRequest;
import dev.relayfarm.services.farm.MeasureResult;
import dev.relayfarm.services.store.TuningRecords;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.BatchMeasurer;
import dev.relayfarm.tuning.measure.Candidate;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.tuning.LayerMeasurer;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaTarget;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@link BatchMeasurer} (and, for VTA layers, the {@link LayerMeasurer}) of a tuner worker: each round is lowered to C here and sent as one
 * {@link MeasureRequest} to the agents of the task's device class; the result's records are written to
 * {@code tuning_records} (once per request and position, whoever measured it and however often it was delivered)
 * before the round goes back to the search. Configs the template refuses to lower are recorded as COMPILE_ERROR
 * here, as the library's runner does, without a trip to an agent.
 */
final class RemoteMeasurer implements BatchMeasurer, LayerMeasurer {
    private final long taskId;
    private final String workerId;
    private final String deviceClass;
    private final RecordContext context;
    private final KafkaTemplate<String, String> kafka;
    private final ResultInbox inbox;
    private final TuningRecords rows;
    private final TransactionTemplate tx;
    private final CandidateLowering lowering;
    private final Duration timeout;
    private final String irRef;

    /** {@code irRef}: the module the task's workload comes from, which VTA rounds name (C rounds carry their source). */
    RemoteMeasurer(long taskId, String workerId, RecordContext context, KafkaTemplate<String, String> kafka, ResultInbox inbox, TuningRecords rows,
                   TransactionTemplate tx, CandidateLowering lowering, Duration timeout, String irRef) {
        this.taskId = taskId;
        this.workerId = workerId;
        this.deviceClass = context.device().deviceClass();
        this.context = context;
        this.kafka = kafka;
        this.inbox = inbox;
        this.rows = rows;
        this.tx = tx;
        this.lowering = lowering;
        this.timeout = timeout;
        this.irRef = irRef;
    }

    @Override
    public MeasuredBatch measureWithBaseline(TuningTask task, List<ScheduleConfig> configs) {
        Candidate reference = Candidate.lower(task, task.defaultConfig());
        List<Candidate> sent = new ArrayList<>();
        List<Integer> sentIndex = new ArrayList<>();
        Map<Integer, Measurement> refused = new TreeMap<>();
        for (int i = 0; i < configs.size(); i++) {
            try {
                sent.add(lowering.lower(task, configs.get(i)));
                sentIndex.add(i);
            } catch (RuntimeException e) { // the template refuses the config for this shape
                refused.put(i, new Measurement(task.key(), configs.get(i), new Measurement.Failure(MeasureError.COMPILE_ERROR, "lowering: " + e.getMessage())));
            }
        }
        List<TuningRecord> local = TuningRecord.batch(new ArrayList<>(refused.values()), task.defaultConfig(), context, Instant.now());
        Answer answer = exchange(task.target().toString(), MeasureCandidate.CKernel.of(reference), sent.stream().<MeasureCandidate>map(MeasureCandidate.CKernel::of).toList(),
                local);
        List<TuningRecord> measured = answer.records();
        Measurement baseline = measured.getFirst().measurement();
        if (answer.baselineFailed()) throw new BaselineFailedException(baseline);
        Measurement[] out = new Measurement[configs.size()];
        for (int k = 0; k < sent.size(); k++) out[sentIndex.get(k)] = measured.get(k + 1).measurement();
        refused.forEach((i, m) -> out[i] = m);
        return new MeasuredBatch(baseline, List.of(out));
    }

    /**
     * A VTA layer's round: the schedules go to the agents of the class as {@code vta-layer} candidates naming the
     * module at {@code irRef} (the agent lowers and simulates them, so a schedule that does not fit comes back as its
     * COMPILE_ERROR record); the records are written as a C round's.
     */
    @Override
    public MeasuredBatch measureWithBaseline(VtaLayerTask task, List<ScheduleConfig> configs) {
        if (irRef == null) throw new IllegalStateException("task " + taskId + ": a VTA round needs the module's irRef");
        MeasureCandidate reference = new MeasureCandidate.VtaLayer(task.key(), task.defaultConfig(), irRef);
        List<MeasureCandidate> sent = configs.stream().<MeasureCandidate>map(c -> new MeasureCandidate.VtaLayer(task.key(), c, irRef)).toList();
        Answer answer = exchange(VtaTarget.target(task.config()), reference, sent, List.of());
        Measurement baseline = answer.records().getFirst().measurement();
        if (answer.baselineFailed()) throw new BaselineFailedException(baseline);
        return new MeasuredBatch(baseline, answer.records().subList(1, answer.records().size()).stream().map(TuningRecord::measurement).toList());
    }

    /** An agent's records for a round (the default's first), and whether the default failed (then only its record). */
    private record Answer(List<TuningRecord> records, boolean baselineFailed) {}

    /**
     * Sends one round, waits for its result, checks that it answers the request (one record per config sent, in order)
     * and writes its records, then {@code local} ones (configs refused before sending) after them, once per position.
     */
    private Answer exchange(String target, MeasureCandidate reference, List<MeasureCandidate> sent, List<TuningRecord> local) {
        UUID id = UUID.randomUUID();
        MeasureResult result = send(new MeasureRequest(id, taskId, workerId, deviceClass, target, reference, sent, Instant.now()));
        List<TuningRecord> measured = result.records().stream().map(TuningRecord::fromJson).toList();
        // checked before anything is written: a result that does not answer this request is not a measurement of it
        int expected = result.baselineFailed() ? 1 : sent.size() + 1;
        if (measured.size() != expected) {
            throw new IllegalStateException("agent " + result.deviceId() + " answered measure request " + id + " with " + measured.size() + " records for "
                    + expected + " configs");
        }
        for (int p = 0; p < measured.size(); p++) {
            ScheduleConfig want = p == 0 ? reference.config() : sent.get(p - 1).config();
            if (!measured.get(p).config().equals(want)) {
                throw new IllegalStateException("agent " + result.deviceId() + " answered measure request " + id + " with config " + measured.get(p).config()
                        + " at position " + p + ", where " + want + " was sent");
            }
        }
        tx.executeWithoutResult(s -> {
            for (int p = 0; p < measured.size(); p++) rows.insert(measured.get(p), taskId, result.deviceId(), id, p);
            for (int k = 0; k < local.size(); k++) rows.insert(local.get(k), taskId, null, id, measured.size() + k);
        });
        return new Answer(measured, result.baselineFailed());
    }

    private MeasureResult send(MeasureRequest request) {
        var future = inbox.expect(request.requestId());
        try {
            try {
                kafka.send(FarmTopics.measureRequests(deviceClass), request.requestId().toString(), FarmMessages.write(request)).get(30, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("the Kafka broker did not acknowledge measure request " + request.requestId() + " within 30 s");
            }
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for measure request " + request.requestId());
        } catch (TimeoutException e) {
            throw new IllegalStateException("no agent of device class " + deviceClass + " answered measure request " + request.requestId() + " within "
                    + timeout + " (is one ONLINE? GET /api/v1/devices)");
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not send measure request " + request.requestId() + ": " + e.getCause(), e.getCause());
        } finally {
            inbox.forget(request.requestId());
        }
    }
}
