package dev.relayfarm.cli;

import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.passes.WinogradConv2d;
import java.util.Optional;

/**
 * Options several subcommands take ({@code -O LEVEL}, {@code --winograd on|off}), checked one way; {@code --shape} is read
 * by {@code pipeline.InputShapes}.
 */
final class CommonOptions {
    private CommonOptions() {}

    /** The message for an {@code -O} level outside the pipeline's ({@link OptLevels#PIPELINE}), if it is. */
    static Optional<String> optLevelError(int level) {
        return OptLevels.PIPELINE.contains(level) ? Optional.empty() : Optional.of("-O must be " + OptLevels.PIPELINE + ", got " + level);
    }

    /** The help of {@code --winograd}. */
    static final String WINOGRAD_HELP = "on|off: Winograd F(4x4, 3x3) for the eligible 3x3 convolutions (pass winograd-conv2d; default: on at -O3)";

    /**
     * Applies {@code --winograd}: sets the pass's JVM property ({@link WinogradConv2d#PROPERTY}) for this process, which
     * compiles one model per command; null leaves the default. The message for a value other than on/off, if it is.
     */
    static Optional<String> applyWinograd(String mode) {
        if (mode == null) return Optional.empty();
        if (!mode.equals("on") && !mode.equals("off")) return Optional.of("--winograd must be on or off, got " + mode);
        System.setProperty(WinogradConv2d.PROPERTY, mode);
        return Optional.empty();
    }
}
