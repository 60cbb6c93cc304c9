package dev.relayfarm.cli;

import dev.relayfarm.passes.OptLevels;
import java.util.Optional;

/** Options several subcommands take ({@code -O LEVEL}), checked one way; {@code --shape} is read by {@code pipeline.InputShapes}. */
final class CommonOptions {
    private CommonOptions() {}

    /** The message for an {@code -O} level outside the pipeline's ({@link OptLevels#PIPELINE}), if it is. */
    static Optional<String> optLevelError(int level) {
        return OptLevels.PIPELINE.contains(level) ? Optional.empty() : Optional.of("-O must be " + OptLevels.PIPELINE + ", got " + level);
    }
}
