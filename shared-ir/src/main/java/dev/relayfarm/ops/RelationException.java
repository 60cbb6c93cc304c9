package dev.relayfarm.ops;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.TypeCheckError;

/**
 * A type relation (or attribute parser) found that its arguments cannot satisfy it. The message
 * states the violated constraint and the actual values; the solver prefixes the source position and
 * operator name.
 */
public class RelationException extends RuntimeException implements TypeCheckError {
    public RelationException(String message) {
        super(message);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("relation-violated", getMessage());
    }
}
