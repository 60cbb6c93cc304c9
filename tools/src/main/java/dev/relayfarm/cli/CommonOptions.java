package dev.relayfarm.cli;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.pipeline.InputShapes;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Options several subcommands take ({@code --shape NAME=DIMS}, {@code -O LEVEL}), parsed and checked one way. */
final class CommonOptions {
    private CommonOptions() {}

    /**
     * The {@code --shape} values as {@link ImportOptions#withInputShapes} takes them, in the order given
     * (a name given twice keeps its last dims). Throws {@link IllegalArgumentException} naming a malformed value.
     */
    static Map<String, List<Long>> inputShapes(List<String> shapes) {
        return InputShapes.of(shapes);
    }

    /** The message for an {@code -O} level outside the pipeline's 0..3, if it is. */
    static Optional<String> optLevelError(int level) {
        return level < 0 || level > 3 ? Optional.of("-O must be 0..3, got " + level) : Optional.empty();
    }
}
