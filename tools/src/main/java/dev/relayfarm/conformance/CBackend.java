package dev.relayfarm.conformance;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The {@code --backend c} of {@code relayc check} and {@code relayc conformance}: the optimized module
 * compiled to an artifact in a temporary directory, loaded and run, then the directory removed. The
 * kernels' shared library is cached by content (CCompiler), so re-checking is cheap.
 */
public record CBackend(CompileOptions options, int threads) implements OnnxCheck.Backend {
    @Override
    public Value run(IRModule module, List<NDArray> inputs) {
        Path dir;
        try {
            dir = Files.createTempDirectory("relayfarm-artifact");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            Stages.codegen(module, options, dir);
            try (CompiledModel m = CompiledModel.load(dir)) {
                if (threads > 0) m.setNumThreads(threads);
                List<NDArray> outs = m.run(inputs);
                if (outs.size() == 1) return new TensorValue(outs.getFirst());
                List<Value> fields = new ArrayList<>();
                for (NDArray a : outs) fields.add(new TensorValue(a));
                return new TupleValue(fields);
            }
        } finally {
            delete(dir);
        }
    }

    static void delete(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            // a leftover temp dir is harmless
        }
    }
}
