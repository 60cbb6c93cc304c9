package dev.relayfarm.pipeline;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.InputError;

/**
 * What a compile request or a {@code relayc} command was given besides a readable model is wrong: an unknown format,
 * malformed shapes, shapes given for Relay text, a model that is not UTF-8 text, a file that does not exist, an
 * option's value, a model over the import limits. A user error like the importer's own.
 */
public sealed class ModelInputException extends IllegalArgumentException implements InputError permits InputShapeException {
    /** The code of an input error no more specific code describes. */
    public static final String INVALID_INPUT = "invalid-input";

    private final String code;

    public ModelInputException(String message) {
        this(INVALID_INPUT, message);
    }

    /** @param code the diagnostic's stable code, e.g. {@code invalid-opt-level} */
    public ModelInputException(String code, String message) {
        super(message);
        this.code = code;
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error(code, getMessage());
    }
}
