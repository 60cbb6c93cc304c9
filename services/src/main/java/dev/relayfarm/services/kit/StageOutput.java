package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * A stage's result: the IR it produced (a blob key) and the payload of its output message. The last
 * stage also hands over the artifact; the kit stores it with the stage result in one transaction, adds
 * its id to the payload ({@code artifactId}) and marks the job SUCCEEDED.
 */
public record StageOutput(String irRef, ObjectNode payload, Optional<BuiltArtifact> artifact) {
    public StageOutput {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(artifact, "artifact");
    }

    public static StageOutput of(String irRef, ObjectNode payload) {
        return new StageOutput(irRef, payload, Optional.empty());
    }

    /** An artifact archive already in the blob store, with the facts the artifacts row keeps. */
    public record BuiltArtifact(String contentHash, String tarSha256, long sizeBytes, JsonNode manifest) {}
}
