package dev.relayfarm.ops;

/**
 * A type relation (or attribute parser) found that its arguments cannot satisfy it. The message
 * states the violated constraint and the actual values; the solver prefixes the source position and
 * operator name.
 */
public class RelationException extends RuntimeException {
    public RelationException(String message) {
        super(message);
    }
}
