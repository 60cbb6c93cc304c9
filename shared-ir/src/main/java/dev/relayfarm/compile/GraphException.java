package dev.relayfarm.compile;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.UnsupportedError;

/** A module the graph executor cannot run (not dataflow over fused kernels, or not statically shaped); the message names the node. */
public final class GraphException extends RuntimeException implements UnsupportedError {
    public GraphException(String message) {
        super(message);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("not-executable", getMessage());
    }
}
