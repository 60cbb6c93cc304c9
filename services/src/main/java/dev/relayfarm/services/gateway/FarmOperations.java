package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.store.TuningRuns;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * An operator's levers on the farm, the one way the API and the dashboard pull them: drain a device, cancel a tuning
 * run. Failures are the API's problems (404; 409 for an OFFLINE device or a run that already ended); the caller's role
 * is checked before this ({@code @RequiresRole(OPERATOR)}).
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class FarmOperations {
    private static final Logger log = LoggerFactory.getLogger(FarmOperations.class);
    private final Devices devices;
    private final TuningRuns runs;

    public FarmOperations(Devices devices, TuningRuns runs) {
        this.devices = devices;
        this.runs = runs;
    }

    /** DRAINING: the agent finishes what it measures and takes nothing new. */
    public void drain(String id, Caller caller) {
        switch (devices.drain(id)) {
            case NOT_FOUND -> throw deviceNotFound(id);
            case OFFLINE -> throw new ApiProblem(ProblemType.DEVICE_OFFLINE, "device " + id + " is OFFLINE (no heartbeat lately): there is no agent"
                    + " to drain; a device that comes back registers as ONLINE and can be drained then");
            case DRAINING -> log.info("device {} DRAINING by {}", id, caller.name());
        }
    }

    /** CANCELLED, with its tasks no other live run needs. */
    public void cancel(long run, Caller caller) {
        var outcome = runs.cancel(run).orElseThrow(() -> runNotFound(run));
        if (!outcome.cancelled()) {
            throw new ApiProblem(ProblemType.TUNING_RUN_FINISHED, "tuning run " + run + " is already " + outcome.before() + " and can no longer be cancelled");
        }
        log.info("tuning run {} cancelled by {}; tasks cancelled with it: {}", run, caller.name(), outcome.cancelledTaskIds());
    }

    static ApiProblem deviceNotFound(String id) {
        return new ApiProblem(ProblemType.DEVICE_NOT_FOUND, "no device with id '" + id + "'");
    }

    static ApiProblem runNotFound(long id) {
        return new ApiProblem(ProblemType.TUNING_RUN_NOT_FOUND, "no tuning run with id " + id);
    }
}
