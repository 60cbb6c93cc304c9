package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.CompiledModel;
import java.util.List;

/** A compiled artifact through the Java runtime (FFM), with a fixed thread count. */
public final class CompiledRunner implements ModelRunner {
    private final CompiledModel model;
    private final String name;

    public CompiledRunner(CompiledModel model, int threads) {
        this(model, threads, "relayfarm-c");
    }

    /** {@code name} tells artifacts of one model apart in a table (tuned, untuned). */
    public CompiledRunner(CompiledModel model, int threads, String name) {
        this.model = model;
        this.name = name;
        model.setNumThreads(threads);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<NDArray> run(List<NDArray> inputs) {
        return model.run(inputs);
    }

    @Override
    public void close() {
        model.close();
    }
}
