package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real model in float16 (issue #20): mnist8_cntk from ../shared/onnx/models, imported in float32,
 * rewritten so that every weight is a float16 constant and the input is cast to float16 at the top
 * (every activation is then float16: each operator's output dtype follows its inputs'), run by the
 * interpreter and (with a C compiler) through a compiled artifact at -O3, and compared with the
 * float32 model's output.
 *
 * <p>Tolerance: float16 keeps 11 significant bits (a relative step of 2^-11 ≈ 4.9e-4 per rounding),
 * and the model rounds after every operator (two conv layers summing 200+ products each, bias adds,
 * pools, a dense layer), so a logit may drift by some tens of roundings of the output's scale: each
 * logit must be within 1e-2 of the largest float32 logit's magnitude, and the predicted class
 * (the argmax) must be the same. Skipped when the model data is absent.
 */
class Float16ModelTest {
    private static final double SCALE_TOLERANCE = 1e-2;

    @TempDir
    static Path tmp;

    @Test
    void mnistInFloat16MatchesFloat32WithinFloat16Tolerance() {
        Path models = OnnxTestData.models().orElse(null);
        assumeTrue(models != null && models.resolve("mnist8_cntk").toFile().isDirectory(), "../shared/onnx/models/mnist8_cntk not found: skipped");
        CompiledModelsTest.ModelCase c = CompiledModelsTest.modelFolder(models.resolve("mnist8_cntk"));
        NDArray input = c.inputs().getFirst();
        NDArray f32 = run(c.module(), input);

        IRModule half = toFloat16(c.module());
        Function main = half.main().orElseThrow();
        // every constant the model holds is float16 now (weights and biases; integer shapes stay integers)
        List<DType> constantDtypes = new java.util.ArrayList<>();
        for (Expr e : dev.relayfarm.ir.ExprTraversal.postOrder(main.body())) if (e instanceof Constant k) constantDtypes.add(k.data().dtype());
        assertTrue(constantDtypes.contains(DType.FLOAT16) && !constantDtypes.contains(DType.FLOAT32), "constants: " + constantDtypes);

        NDArray f16 = run(half, input);
        assertEquals(DType.FLOAT16, f16.dtype(), "the output is float16: the activations stayed float16");
        assertEquals(f32.elementCount(), f16.elementCount());
        double scale = 0;
        for (int i = 0; i < f32.elementCount(); i++) scale = Math.max(scale, Math.abs(f32.getDouble(i)));
        double worst = 0;
        for (int i = 0; i < f32.elementCount(); i++) worst = Math.max(worst, Math.abs(f16.getDouble(i) - f32.getDouble(i)));
        System.out.printf("mnist8 float16 vs float32: largest difference %.3g on logits up to %.3g (%.2g of the scale)%n", worst, scale, worst / scale);
        assertTrue(worst <= SCALE_TOLERANCE * scale, "largest difference " + worst + " exceeds " + SCALE_TOLERANCE + " of " + scale);
        assertEquals(argmax(f32), argmax(f16), "the predicted class");
        if (CCompiler.host().isPresent()) {
            // compiled at -O3: every kernel widens float16 to float32, computes, and rounds each operator's result
            ArtifactCompiler.Artifact art = ArtifactCompiler.compile(OptPipeline.optimize(half, 3), CompileOptions.host(3), tmp.resolve("mnist8_f16"));
            NDArray compiled;
            try (CompiledModel m = CompiledModel.load(art.dir())) {
                compiled = m.run(List.of(input)).getFirst();
            }
            assertEquals(DType.FLOAT16, compiled.dtype(), "the compiled output is float16");
            double worstCompiled = 0, vsInterpreter = 0;
            for (int i = 0; i < f32.elementCount(); i++) {
                worstCompiled = Math.max(worstCompiled, Math.abs(compiled.getDouble(i) - f32.getDouble(i)));
                vsInterpreter = Math.max(vsInterpreter, Math.abs(compiled.getDouble(i) - f16.getDouble(i)));
            }
            System.out.printf("mnist8 float16 compiled: largest difference %.3g from float32, %.3g from the float16 interpreter%n", worstCompiled, vsInterpreter);
            assertTrue(worstCompiled <= SCALE_TOLERANCE * scale, "compiled: largest difference " + worstCompiled + " exceeds " + SCALE_TOLERANCE + " of " + scale);
            assertEquals(argmax(f32), argmax(compiled), "the compiled model's predicted class");
            // the kernels round where the interpreter does (per operator, accumulating wider): at most one
            // float16 ulp of the logit scale apart (measured: equal)
            assertTrue(vsInterpreter <= 0x1p-10 * scale, "compiled vs float16 interpreter: " + vsInterpreter);
        }
        // and the float32 model still matches the ONNX reference, so the comparison is against a right answer
        assertTrue(dev.relayfarm.interp.Tolerance.ONNX_DEFAULT.compare(f32, c.expected().getFirst()).isEmpty());
    }

    private static NDArray run(IRModule m, NDArray input) {
        return ((TensorValue) Interpreter.runMain(TypeInference.infer(m).module(), input)).data();
    }

    /** Each element rounded once to float16. */
    private static NDArray toFloat16(NDArray a) {
        NDArray out = NDArray.zeros(DType.FLOAT16, a.shape());
        for (int i = 0; i < a.elementCount(); i++) out.setDouble(i, a.getDouble(i));
        return out;
    }

    private static int argmax(NDArray a) {
        int best = 0;
        for (int i = 1; i < a.elementCount(); i++) if (a.getDouble(i) > a.getDouble(best)) best = i;
        return best;
    }

    /**
     * {@code m} with float32 constants converted to float16 (rounded once) and each float32 parameter
     * cast to float16 where it is used; the parameters themselves stay float32, so the model takes
     * the same inputs. An attribute naming float32 as a result dtype (out_dtype, dtype) becomes float16.
     */
    static IRModule toFloat16(IRModule m) {
        Function f = m.main().orElseThrow();
        Set<Var> params = Collections.newSetFromMap(new IdentityHashMap<>());
        params.addAll(f.params());
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return switch (post) {
                    case Var v when params.contains(v) -> new Call(Op.get("cast"), List.of(v), Attrs.of("dtype", AttrValue.of("float16")));
                    case Constant k when k.data().dtype().equals(DType.FLOAT32) -> new Constant(toFloat16(k.data()));
                    case Call call when call.attrs() != null -> {
                        Attrs a = call.attrs();
                        for (String key : List.of("out_dtype", "dtype")) {
                            if (a.get(key).orElse(null) instanceof AttrValue.StringValue s && s.value().equals("float32")) a = a.with(key, AttrValue.of("float16"));
                        }
                        yield a == call.attrs() ? call : new Call(call.callee(), call.args(), a);
                    }
                    default -> post;
                };
            }
        }.rewrite(f.body());
        return IRModule.fromMain(new Function(f.params(), body));
    }
}
