package dev.relayfarm.cli;

import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.passes.WinogradConv2d;
import java.util.Optional;
import java.util.Set;

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

    /** The message for a {@code --winograd} other than on/off (null: not given), if it is one. */
    static Optional<String> winogradError(String mode) {
        return mode == null || mode.equals("on") || mode.equals("off") ? Optional.empty() : Optional.of("--winograd must be on or off, got " + mode);
    }

    /** The passes {@code --winograd} leaves out of the pipeline: {@code winograd-conv2d} for off, none otherwise (on is the default). */
    static Set<String> disabledPasses(String winograd) {
        return "off".equals(winograd) ? Set.of(WinogradConv2d.NAME) : Set.of();
    }
}
