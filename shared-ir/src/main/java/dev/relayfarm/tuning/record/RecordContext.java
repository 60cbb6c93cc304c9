package dev.relayfarm.tuning.record;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.tuning.Device;
import java.util.Objects;

/**
 * Where and with what a batch of candidates was measured: the target string they were built for, the device they
 * ran on, the C compiler's identity ({@link CCompiler#identity()}) and RelayFarm's version. Every
 * {@link TuningRecord} carries it, so a record is only ever applied where the same target, device class and compiler
 * would build and run it again.
 */
public record RecordContext(String target, Device device, String compiler, String relayfarmVersion) {
    public RecordContext {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(compiler, "compiler");
        Objects.requireNonNull(relayfarmVersion, "relayfarmVersion");
    }

    /** Measuring here ({@link Device#local()}) kernels built for {@code target} by {@code cc}, with this RelayFarm. */
    public static RecordContext local(Target target, CCompiler cc) {
        return new RecordContext(target.toString(), Device.local(), cc.identity(), ArtifactCompiler.VERSION);
    }
}
