package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.PrimExpr;
import java.util.Optional;

/**
 * Makes {@code buffer} exist while {@code body} runs. {@code elements}, when present, is how many elements the buffer
 * holds, computed at run time (a kernel over a dynamic width: kernel/lower/WidthKernels; a local one is then a C
 * variable-length array); the buffer's static shape is only nominal, and its accesses are one-dimensional.
 */
public record Allocate(Buffer buffer, Scope scope, Stmt body, Optional<PrimExpr> elements) implements Stmt {
    public Allocate {
        if (elements.isPresent() && buffer.rank() != 1) {
            throw new IllegalArgumentException("buffer " + buffer.name() + ": a run-time size needs a one-dimensional buffer");
        }
    }

    public Allocate(Buffer buffer, Scope scope, Stmt body) {
        this(buffer, scope, body, Optional.empty());
    }
}
