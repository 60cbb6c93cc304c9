package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import java.util.List;

/** One way of running a model: inputs in graph-input order, outputs in graph-output order (tuples flattened). */
public interface ModelRunner extends AutoCloseable {
    /** What the benchmark table calls it ("relayfarm-c", "onnxruntime", ...). */
    String name();

    List<NDArray> run(List<NDArray> inputs);

    /**
     * Called after a block of timed runs, before another engine's: stop what would go on running in the background and
     * slow the other engine down (ONNX Runtime's spinning workers). The next {@link #run} starts it again, untimed.
     */
    default void pause() {}

    @Override
    default void close() {}
}
