package dev.relayfarm.services.kit;

import java.util.Objects;

/**
 * The job's model as messages carry it (schema {@code compile.requested.schema.json#/$defs/model}).
 *
 * @param sha256 the uploaded bytes in table blobs
 * @param format {@code onnx} or {@code relay}
 */
public record JobModel(String sha256, String name, String format) {
    public JobModel {
        Objects.requireNonNull(sha256, "model.sha256");
        Objects.requireNonNull(name, "model.name");
        Objects.requireNonNull(format, "model.format");
    }
}
