package dev.relayfarm.compile;

/** A module the graph executor cannot run (not dataflow over fused kernels, or not statically shaped); the message names the node. */
public final class GraphException extends RuntimeException {
    public GraphException(String message) {
        super(message);
    }
}
