package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.CompiledModel;
import java.util.List;

/** A compiled artifact through the Java runtime (FFM), with a fixed thread count. */
public final class CompiledRunner implements ModelRunner {
    private final CompiledModel model;

    public CompiledRunner(CompiledModel model, int threads) {
        this.model = model;
        model.setNumThreads(threads);
    }

    @Override
    public String name() {
        return "relayfarm-c";
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
