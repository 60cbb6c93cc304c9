package dev.relayfarm.pipeline;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * A model to import: its bytes, its format and the name diagnostics use (a file name or the name a user
 * uploaded it under).
 *
 * @param baseDir where an ONNX model's external data files live; null for uploaded bytes (a model that
 *     references external data then fails to import, naming the file it wanted)
 */
public record ModelSource(String name, ModelFormat format, byte[] bytes, Path baseDir) {
    public ModelSource {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(bytes, "bytes");
    }

    /** Bytes without a directory (an upload, a blob). */
    public static ModelSource of(String name, ModelFormat format, byte[] bytes) {
        return new ModelSource(name, format, bytes, null);
    }

    /**
     * A model file; its format is {@link ModelFormat#detect detected} from its name, else its content. A file that
     * tells neither is read as Relay text, whose parser then says what is wrong with it.
     */
    public static ModelSource read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) throw new ModelInputException("no-such-file", "no such file: " + file);
        Path dir = file.toAbsolutePath().getParent();
        byte[] bytes = Files.readAllBytes(file);
        return new ModelSource(file.toString(), ModelFormat.detect(file.getFileName().toString(), bytes).orElse(ModelFormat.RELAY), bytes, dir);
    }
}
