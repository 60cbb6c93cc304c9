package dev.relayfarm.pipeline;

import dev.relayfarm.compile.CompileLimits;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Bounds on the tensors a model declares, checked right after import: {@code @main}'s inputs (from the model or
 * bound by the shapes) and its constants (ONNX initializers, Relay literals). A model over a bound fails at import
 * with a {@link ModelInputException} naming the tensor, its shape, its size, the limit and the farm setting
 * ({@code relayfarm.limits.*}); without the check, {@code shapes=x=1x3x99999999x99999} compiled "successfully"
 * into an artifact wanting a 410 TB arena. Intermediates are bounded later, by the memory plan's arena
 * ({@link CompileLimits#maxArenaBytes}).
 *
 * @param maxTensorBytes one input or constant (default 4 GiB: 1G float32 elements, 250x the 1x3x2240x2240 image
 *                       of a large detector; ONNX's protobuf cannot even hold an initializer of 2 GiB)
 * @param maxTotalBytes  all inputs and constants together, the memory a run needs besides its arena
 *                       (default 16 GiB, four tensors at the limit; the same as the default arena limit)
 */
public record ImportLimits(long maxTensorBytes, long maxTotalBytes) {
    public static final ImportLimits DEFAULT = new ImportLimits(4 * CompileLimits.GIB, 16 * CompileLimits.GIB);
    /** The diagnostic code of a model over these limits. */
    public static final String IMPORT_LIMIT = "import-limit";

    public ImportLimits {
        if (maxTensorBytes < 0) throw new IllegalArgumentException("maxTensorBytes must be >= 0, got " + maxTensorBytes);
        if (maxTotalBytes < 0) throw new IllegalArgumentException("maxTotalBytes must be >= 0, got " + maxTotalBytes);
    }

    /**
     * Checks {@code module}'s {@code @main} inputs and every constant. {@code shapes} are the bindings the import
     * got: an input they bound is reported under {@code shapesSource} ({@link InputShapes#JOB} or
     * {@link InputShapes#CLI}), one the model declares under the model's name. Dynamic dims are not sized here
     * (the executable check reports them).
     */
    public void check(IRModule module, String modelName, Map<String, List<Long>> shapes, String shapesSource) {
        long total = 0;
        List<String> parts = new ArrayList<>();
        for (Function f : module.functions().values()) {
            boolean isMain = module.main().map(m -> m == f).orElse(false);
            if (isMain) {
                for (Var p : f.params()) {
                    if (!(p.annotation() instanceof TensorType t) || !t.isStatic()) continue;
                    List<Long> dims = t.shape().stream().map(d -> ((Dim.Int) d).value()).toList();
                    String name = originalName(p, shapes);
                    String where = shapes.containsKey(name) ? shapesSource + ": " + name + "=" + InputShapes.dims(dims) : modelName + ": input " + name + " (" + InputShapes.dims(dims) + ")";
                    long bytes = bytes(where, dims, t.dtype());
                    total = addTotal(total, bytes, modelName);
                    parts.add(name);
                }
            }
            for (Expr e : ExprTraversal.postOrder(f)) {
                if (!(e instanceof Constant c)) continue;
                List<Long> dims = java.util.Arrays.stream(c.data().shape()).mapToLong(i -> i).boxed().toList();
                String where = modelName + ": constant (" + InputShapes.dims(dims) + " " + c.data().dtype() + ")" + (c.span() != null && c.span().isKnown() ? " at " + c.span() : "");
                total = addTotal(total, bytes(where, dims, c.data().dtype()), modelName);
            }
        }
        if (total > maxTotalBytes) {
            throw new ModelInputException(IMPORT_LIMIT, modelName + ": inputs (" + String.join(", ", parts) + ") and constants need " + CompileLimits.bytes(total)
                    + " together, the limit is " + CompileLimits.bytes(maxTotalBytes) + " (relayfarm.limits.max-total-bytes)");
        }
    }

    /** The ONNX name an input was bound under (the importer sanitizes names: {@code input.1} becomes {@code input_1}). */
    private static String originalName(Var p, Map<String, List<Long>> shapes) {
        for (String n : shapes.keySet()) if (n.equals(p.name()) || n.replaceAll("[^A-Za-z0-9_]", "_").equals(p.name())) return n;
        return p.name();
    }

    private long bytes(String where, List<Long> dims, DType dtype) {
        long n = (long) dtype.storageBytes() * dtype.lanes();
        for (long d : dims) {
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new ModelInputException(IMPORT_LIMIT, where + ": its element count overflows a 64-bit count");
            }
        }
        if (n > maxTensorBytes) {
            throw new ModelInputException(IMPORT_LIMIT, where + " " + dtype + " needs " + CompileLimits.bytes(n) + ", the limit is " + CompileLimits.bytes(maxTensorBytes)
                    + " per tensor (relayfarm.limits.max-tensor-bytes)");
        }
        return n;
    }

    private static long addTotal(long total, long bytes, String modelName) {
        try {
            return Math.addExact(total, bytes);
        } catch (ArithmeticException e) {
            throw new ModelInputException(IMPORT_LIMIT, modelName + ": inputs and constants overflow a 64-bit byte count");
        }
    }
}
