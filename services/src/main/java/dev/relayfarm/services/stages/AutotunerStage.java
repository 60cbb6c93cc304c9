package dev.relayfarm.services.stages;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.pipeline.Workload;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.ScheduleStore.StoredSchedule;
import dev.relayfarm.services.store.ScheduleStore;
import java.util.List;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * ir.optimized → ir.tuned: picks a schedule for every workload of the module ({@link Stages#workloads}):
 * the best reviewed one stored for (workload, target) ({@link ScheduleStore#best}), else the template's
 * default. Until the tuning farm runs this stage measures nothing; it applies what the farm has stored.
 * A stored config for another template than the kernel's (the template changed since) is not applied.
 * The IR passes through unchanged.
 */
@Component
@ServiceRole("autotuner")
public class AutotunerStage implements StageHandler {
    private final IrStore ir;
    private final ScheduleStore schedules;

    public AutotunerStage(IrStore ir, ScheduleStore schedules) {
        this.ir = ir;
        this.schedules = schedules;
    }

    @Override
    public Stage stage() {
        return Stage.AUTOTUNER;
    }

    @Override
    public StageOutput run(StageInput in) {
        Target target = Target.parse(in.options().path("target").asText(CompileRequest.DEFAULT_TARGET));
        List<Workload> workloads = Stages.workloads(ir.read(in.irRef()), target);
        Map<String, StoredSchedule> stored = schedules.best(workloads.stream().map(Workload::key).toList(), target.toString());
        ObjectNode payload = in.forwardPayload();
        ArrayNode list = payload.putArray("schedules");
        for (Workload w : workloads) {
            StoredSchedule s = stored.get(w.key());
            boolean use = s != null && s.config().template().equals(w.template());
            ObjectNode n = list.addObject();
            n.put("workload", w.key());
            n.put("template", w.template());
            n.set("config", Envelopes.MAPPER.valueToTree(use ? s.config() : w.defaultConfig()));
            n.put("source", use ? "stored" : "default");
            if (use) n.put("scheduleId", s.id());
            else n.putNull("scheduleId");
        }
        return StageOutput.of(in.irRef(), payload);
    }
}
