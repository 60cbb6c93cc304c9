package dev.relayfarm.cli;

import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.ModelSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A model named on the command line as the pipeline's {@link ModelSource}, so every command imports through
 * {@link dev.relayfarm.pipeline.Stages#importModel} as the farm does. {@code -} is Relay text on standard input;
 * a Relay text file is checked to be UTF-8 here, so the message names the file and byte the CLI's way.
 */
final class ModelFiles {
    private ModelFiles() {}

    static ModelSource read(String file) {
        if (file.equals("-")) return relayText("<stdin>", CliErrors.readText(file));
        try {
            ModelSource source = ModelSource.read(Path.of(file));
            return source.format() == ModelFormat.RELAY ? relayText(source.name(), CliErrors.decodeUtf8(source.bytes(), file)) : source;
        } catch (IOException e) {
            throw new ModelInputException("cannot read " + file + ": " + e.getMessage());
        }
    }

    static ModelSource read(Path file) {
        return read(file.toString());
    }

    private static ModelSource relayText(String name, String text) {
        return ModelSource.of(name, ModelFormat.RELAY, text.getBytes(StandardCharsets.UTF_8));
    }
}
