package dev.relayfarm.kernel.codegen;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.loop.LoweredFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * Lowered kernels compiled together: one C translation unit, one shared library. Batching kernels
 * in one module pays the compiler's start-up once (about 0.3 s per invocation).
 */
public record CModule(List<LoweredFunc> funcs) {
    public CModule {
        funcs = List.copyOf(funcs);
    }

    public static CModule of(LoweredFunc... funcs) {
        return new CModule(List.of(funcs));
    }

    public String source() {
        return CEmitter.emit(funcs);
    }

    public List<KernelSignature> signatures() {
        List<KernelSignature> out = new ArrayList<>();
        for (LoweredFunc f : funcs) {
            List<TensorSpec> ps = new ArrayList<>();
            for (Buffer b : f.params()) ps.add(new TensorSpec(b.name(), b.shape(), b.dtype()));
            out.add(new KernelSignature(f.name(), ps, f.numInputs()));
        }
        return out;
    }
}
