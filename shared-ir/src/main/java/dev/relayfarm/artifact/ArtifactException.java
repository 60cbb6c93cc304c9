package dev.relayfarm.artifact;

/** A module that cannot be compiled to an artifact, or an artifact that cannot be written or loaded; the message says which part and why. */
public final class ArtifactException extends RuntimeException {
    public ArtifactException(String message) {
        super(message);
    }

    public ArtifactException(String message, Throwable cause) {
        super(message, cause);
    }
}
