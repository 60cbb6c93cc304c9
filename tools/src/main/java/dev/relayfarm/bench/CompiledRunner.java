package dev.relayfarm.bench;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Path;
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

    /** Loads the artifact in {@code dir}; the model is closed again when setting its threads fails. */
    public static CompiledRunner load(Path dir, int threads, String name) {
        CompiledModel model = CompiledModel.load(dir);
        try {
            return new CompiledRunner(model, threads, name);
        } catch (RuntimeException e) {
            model.close();
            throw e;
        }
    }

    /** The loaded artifact (its inputs and outputs). */
    public CompiledModel model() {
        return model;
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
