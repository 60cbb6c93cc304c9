package dev.relayfarm.services.stages;

import dev.relayfarm.compile.CompileLimits;
import dev.relayfarm.pipeline.ImportLimits;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * What one job may cost the farm ({@code relayfarm.limits.*}), so that no input can stop it: the importer checks
 * the model's tensors, codegen its kernels, executor steps, generated source and arena, and kills a C compiler
 * that runs too long. A job over a limit fails as the user's error naming the limit's property. The defaults are
 * the library's ({@link ImportLimits#DEFAULT}, {@link CompileLimits#DEFAULT}), where each is explained.
 *
 * @param compileTimeout  wall clock for one C compiler run; it is killed with everything it started after this
 * @param maxTensorBytes  one input (as declared or bound by the job's {@code shapes}) or constant of the model
 * @param maxTotalBytes   all inputs and constants together
 * @param maxArenaBytes   the intermediates' arena of the compiled model's memory plan
 * @param maxKernels      distinct kernels in one artifact
 * @param maxSteps        kernel calls and copies of the graph executor
 * @param maxSourceBytes  the generated C handed to the compiler
 */
@ConfigurationProperties("relayfarm.limits")
public record LimitsProperties(
        @DefaultValue("300s") Duration compileTimeout,
        @DefaultValue("4GB") DataSize maxTensorBytes,
        @DefaultValue("16GB") DataSize maxTotalBytes,
        @DefaultValue("16GB") DataSize maxArenaBytes,
        @DefaultValue("10000") int maxKernels,
        @DefaultValue("1000000") int maxSteps,
        @DefaultValue("64MB") DataSize maxSourceBytes) {
    public LimitsProperties {
        if (compileTimeout.isNegative() || compileTimeout.isZero()) {
            throw new IllegalArgumentException("relayfarm.limits.compile-timeout must be positive, got " + compileTimeout);
        }
    }

    /** The importer's share. */
    public ImportLimits importLimits() {
        return new ImportLimits(maxTensorBytes.toBytes(), maxTotalBytes.toBytes());
    }

    /** Codegen's share. */
    public CompileLimits compileLimits() {
        return new CompileLimits(compileTimeout, maxArenaBytes.toBytes(), maxKernels, maxSteps, maxSourceBytes.toBytes());
    }
}
