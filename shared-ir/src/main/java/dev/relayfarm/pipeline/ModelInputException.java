package dev.relayfarm.pipeline;

/**
 * A job's inputs are wrong before any model is read: an unknown format, a malformed shapes string,
 * shapes given for Relay text, a model that is not UTF-8 text. A user error like the importer's own.
 */
public final class ModelInputException extends IllegalArgumentException {
    public ModelInputException(String message) {
        super(message);
    }
}
