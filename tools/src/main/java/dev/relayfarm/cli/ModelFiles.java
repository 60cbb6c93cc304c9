package dev.relayfarm.cli;

import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.ModelSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A model named on the command line as the pipeline's {@link ModelSource}, so every command imports through
 * {@link dev.relayfarm.pipeline.Stages#importModel} as the farm does. {@code -} is Relay text on standard input;
 * a Relay text file is checked to be UTF-8 here, so the message names the file and byte the CLI's way.
 */
final class ModelFiles {
    /**
     * {@code NAME=FILE} option values ({@code --arg}, {@code --data}, {@code --init}) by name, a leading {@code %} dropped;
     * a malformed or repeated one is the user's error naming the option.
     */
    static Map<String, Path> namedFiles(String option, List<String> values) {
        Map<String, Path> given = new LinkedHashMap<>();
        for (String a : values) {
            int eq = a.indexOf('=');
            if (eq <= 0 || eq == a.length() - 1) throw new ModelInputException(option + " expects NAME=FILE.npy, got '" + a + "'");
            String name = a.substring(0, eq).replaceFirst("^%", "");
            if (given.put(name, Path.of(a.substring(eq + 1))) != null) throw new ModelInputException(option + " " + name + " given twice");
        }
        return given;
    }

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
