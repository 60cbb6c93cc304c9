package dev.relayfarm.services.stages;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.kit.ChosenSchedule;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.kit.TunedPayload;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.ScheduleStore;
import dev.relayfarm.tuning.ScheduleRule;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * ir.optimized → ir.tuned: picks a schedule for every tuning task of the module ({@link Stages#tasks}, which
 * lowers nothing): the stored one {@link ScheduleStore#choose} picks by the library's {@link ScheduleRule}
 * (pinned, else approved and not slower than the default; same template), else the template's default.
 * Until the tuning farm runs this stage measures nothing; it applies what the farm has stored. The IR passes
 * through unchanged.
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
        Target target = Target.parse(in.options().target());
        List<TuningTask> tasks = Stages.tasks(ir.read(in.irRef()), target);
        Map<String, StoredSchedule> stored = schedules.choose(tasks, target);
        List<ChosenSchedule> chosen = new ArrayList<>();
        for (TuningTask t : tasks) {
            StoredSchedule s = stored.get(t.key());
            chosen.add(s != null ? new ChosenSchedule(t.key(), t.template(), s.config(), ChosenSchedule.Source.STORED, s.id())
                    : new ChosenSchedule(t.key(), t.template(), t.defaultConfig(), ChosenSchedule.Source.DEFAULT, null));
        }
        return StageOutput.of(in.irRef(), new TunedPayload(in.model(), in.options(), chosen));
    }
}
