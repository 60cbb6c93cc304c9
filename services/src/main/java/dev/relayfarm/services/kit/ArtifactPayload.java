package dev.relayfarm.services.kit;

import java.util.Objects;

/**
 * The payload of artifact.built (schema {@code artifact.built.schema.json}): the job's artifact.
 *
 * @param contentHash the artifact's own content hash (its manifest.json)
 * @param tarSha256   its tar.gz in table blobs
 * @param artifactId  the job's artifacts row
 */
public record ArtifactPayload(String contentHash, String tarSha256, long sizeBytes, long artifactId) implements Payload {
    public ArtifactPayload {
        Objects.requireNonNull(contentHash, "contentHash");
        Objects.requireNonNull(tarSha256, "tarSha256");
    }
}
