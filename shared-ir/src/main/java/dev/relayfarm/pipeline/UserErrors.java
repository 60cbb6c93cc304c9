package dev.relayfarm.pipeline;

import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.ArtifactLimitException;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.frontend.OnnxFormatException;
import dev.relayfarm.kernel.target.TargetException;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.text.RelayParseException;
import dev.relayfarm.types.TypeException;

/**
 * Which failures of a stage are the user's (the model or the options are wrong): running the stage again
 * gives the same answer, so a service fails the job at once instead of retrying. Everything else (a
 * compiler bug, a missing C compiler, a database outage) may be transient or at least is ours.
 */
public final class UserErrors {
    private UserErrors() {}

    public static boolean isUserError(Throwable t) {
        return switch (t) {
            case ModelInputException e -> true;
            case OnnxFormatException e -> true;     // malformed ONNX, unsupported op or dtype, a missing constant operand
            case RelayParseException e -> true;
            case TypeException e -> true;
            case RelationException e -> true;       // an operator's constraint violated by the model's shapes
            case GraphException e -> true;          // a model the graph executor cannot run (dynamic shapes, control flow)
            case TargetException e -> true;         // an unknown target string
            case ArtifactLimitException e -> true;  // the model needs more kernels, steps, source or arena than the limits allow
            // an operator without a kernel: the model uses what codegen cannot do yet; other artifact errors are ours
            case ArtifactException e -> e.getCause() instanceof UnsupportedOperationException;
            default -> false;
        };
    }
}
