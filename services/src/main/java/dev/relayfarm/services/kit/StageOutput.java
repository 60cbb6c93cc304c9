package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * A stage's result: the IR it produced (a blob key) and what its output message carries. The last stage hands over
 * the artifact instead of a payload; the kit stores it with the stage result in one transaction, sends its
 * {@link ArtifactPayload} (with the artifacts row's id) and marks the job SUCCEEDED.
 */
public sealed interface StageOutput {
    String irRef();

    /** The job goes on to the next stage with {@code payload}. */
    record Forward(String irRef, Payload payload) implements StageOutput {
        public Forward {
            Objects.requireNonNull(payload, "payload");
        }
    }

    /** The job's artifact is built: the pipeline's end. */
    record Built(String irRef, BuiltArtifact artifact) implements StageOutput {
        public Built {
            Objects.requireNonNull(artifact, "artifact");
        }
    }

    static StageOutput of(String irRef, Payload payload) {
        return new Forward(irRef, payload);
    }

    static StageOutput built(String irRef, BuiltArtifact artifact) {
        return new Built(irRef, artifact);
    }

    /** An artifact archive already in the blob store, with the facts the artifacts row keeps. */
    record BuiltArtifact(String contentHash, String tarSha256, long sizeBytes, JsonNode manifest) {}
}
