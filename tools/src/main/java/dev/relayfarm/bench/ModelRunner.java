package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import java.util.List;

/** One way of running a model: inputs in graph-input order, outputs in graph-output order (tuples flattened). */
public interface ModelRunner extends AutoCloseable {
    /** What the benchmark table calls it ("relayfarm-c", "onnxruntime", ...). */
    String name();

    List<NDArray> run(List<NDArray> inputs);

    @Override
    default void close() {}
}
