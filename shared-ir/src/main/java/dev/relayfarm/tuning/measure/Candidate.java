package dev.relayfarm.tuning.measure;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import java.util.Objects;

/**
 * What the runner builds and runs: one kernel's C translation unit (as {@link CModule} emits it: the kernel
 * {@code int32_t NAME(void* const* args)} and the thread pool's {@code rf_set_num_threads}) with the signature
 * naming its symbol and parameters, and the workload and config it stands for. The runner adds the measurement
 * {@code main} itself ({@link MeasurementDriver}).
 *
 * <p>Tuning makes candidates from a task and a config ({@link #lower}); a hardware agent receives the same source in
 * a request, and tests edit the source of a real kernel to make it crash, hang or compute a wrong answer.
 */
public record Candidate(String workloadKey, ScheduleConfig config, String kernelSource, KernelSignature signature) {
    public Candidate {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(kernelSource, "kernelSource");
        Objects.requireNonNull(signature, "signature");
    }

    /**
     * The task's primitive lowered with {@code config} and emitted as C. Throws what lowering throws for a config
     * the template refuses ({@link dev.relayfarm.kernel.template.InvalidConfigException}); the runner records that as
     * a {@code COMPILE_ERROR}.
     */
    public static Candidate lower(TuningTask task, ScheduleConfig config) {
        LoweredKernel k = TuningTasks.lower(task, config);
        CModule module = CModule.of(k.func());
        return new Candidate(task.key(), config, module.source(), module.signatures().getFirst());
    }

    /** The same candidate with other C source (a test's deliberately broken kernel, an agent's received one). */
    public Candidate withSource(String source) {
        return new Candidate(workloadKey, config, source, signature);
    }
}
