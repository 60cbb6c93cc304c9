package dev.relayfarm.conformance;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphException;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.types.TypeInference;
import dev.relayfarm.vm.VirtualMachine;
import dev.relayfarm.vm.VmCompiler;
import dev.relayfarm.vm.VmException;
import dev.relayfarm.vm.VmObject;
import dev.relayfarm.vm.VmProgram;
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
 * kernels' shared library is cached by content (CCompiler), so re-checking is cheap. A module the graph executor
 * refuses (an ONNX If or Loop deciding on data) runs on the VM instead, its kernels compiled the same way.
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
            try {
                Stages.codegen(module, options, dir);
            } catch (GraphException refused) {
                return runOnVm(module, inputs, refused);
            }
            try (CompiledModel m = CompiledModel.load(dir)) {
                if (threads > 0) m.setNumThreads(threads);
                List<NDArray> outs = m.run(inputs);
                // The artifact returns @main's tensors flattened; nest them back as @main's result type
                // (sequences and optionals are tuples, maybe nested or empty).
                Type result = TypeInference.infer(module).typeOf(module.main().orElseThrow().body());
                java.util.Iterator<NDArray> it = outs.iterator();
                Value v = regroup(result, it);
                if (it.hasNext()) throw new IllegalStateException("the artifact returned " + outs.size() + " tensors for a result of type " + result);
                return v;
            }
        } finally {
            delete(dir);
        }
    }

    /**
     * What the graph executor refuses (control flow, recursion) on the VM, as {@code relayc compile} does; its result
     * (tensors, and tuples as ADT values of tag 0) read back as @main's result type.
     */
    private Value runOnVm(IRModule module, List<NDArray> inputs, GraphException refused) {
        VmProgram program;
        try {
            program = VmCompiler.compile(module, options);
        } catch (VmException | dev.relayfarm.compile.UnsupportedKernelException e) {
            throw new GraphException(refused.getMessage() + "; the VM cannot run it either: " + e.getMessage());
        }
        try (VirtualMachine vm = program.load(CCompiler.forTarget(options.target()).orElseThrow(() -> new IllegalStateException("no C compiler for " + options.target())))) {
            if (threads > 0) vm.setNumThreads(threads);
            return fromVm(vm.run("main", inputs), TypeInference.infer(module).typeOf(module.main().orElseThrow().body()));
        }
    }

    private static Value fromVm(VmObject v, Type t) {
        if (t instanceof TupleType tt && v instanceof VmObject.Adt adt && adt.tag() == 0 && adt.fields().size() == tt.fields().size()) {
            List<Value> fields = new ArrayList<>();
            for (int i = 0; i < tt.fields().size(); i++) fields.add(fromVm(adt.fields().get(i), tt.fields().get(i)));
            return new TupleValue(fields);
        }
        if (!(t instanceof TupleType) && v instanceof VmObject.Tensor tensor) return new TensorValue(tensor.toNDArray());
        throw new IllegalStateException("the VM returned " + v + " for a result of type " + t);
    }

    private static Value regroup(Type t, java.util.Iterator<NDArray> flat) {
        if (t instanceof TupleType tt) {
            List<Value> fields = new ArrayList<>();
            for (Type f : tt.fields()) fields.add(regroup(f, flat));
            return new TupleValue(fields);
        }
        if (!flat.hasNext()) throw new IllegalStateException("the artifact returned fewer tensors than its result type " + t + " holds");
        return new TensorValue(flat.next());
    }

    static void delete(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            // a leftover temp dir is harmless
        }
    }
}
