package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.text.RelayPrinter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gradient of a small LeNet-like convolutional network goes the whole way: reverse mode, the gradient pipeline
 * (no closures or references left), -O3, native code; the compiled loss and gradients equal the interpreter's run of
 * the unoptimized gradient program. Exercises the conv2d, conv2d_transpose (the strided and grouped data adjoints) and
 * pool-gradient computes together.
 */
class ConvGradientCompileTest {
    /** Relative error, per output, of the largest element difference to the largest element. */
    static final double TOLERANCE = 1e-4;

    // The loss is the batch mean of the cross-entropy against the one-hot %t, fed as an input.
    static final String LENET = """
            def @main(%x: Tensor[(2, 1, 12, 12), float32], %w1: Tensor[(4, 1, 3, 3), float32], %b1: Tensor[(4), float32],
                      %w2: Tensor[(6, 4, 3, 3), float32], %w3: Tensor[(3, 24), float32], %t: Tensor[(2, 3), float32]) {
              let %c1 = nn.relu(nn.bias_add(nn.conv2d(%x, %w1, padding=[1, 1]), %b1));
              let %p1 = nn.max_pool2d(%c1, pool_size=[2, 2], strides=[2, 2]);
              let %c2 = nn.relu(nn.conv2d(%p1, %w2));
              let %p2 = nn.avg_pool2d(%c2, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True);
              let %y = nn.dense(nn.batch_flatten(%p2), %w3);
              negative(mean(sum(multiply(nn.log_softmax(%y), %t), axis=[1])))
            }
            """;

    // Strided and depthwise convolutions (the grouped weight adjoint), the global pools.
    private static final String DEPTHWISE = """
            def @main(%x: Tensor[(2, 3, 9, 9), float32], %w1: Tensor[(8, 3, 3, 3), float32], %w2: Tensor[(8, 1, 3, 3), float32],
                      %w3: Tensor[(4, 8), float32]) {
              let %c1 = nn.relu(nn.conv2d(%x, %w1, strides=[2, 2], padding=[1, 1]));
              let %c2 = nn.relu(nn.conv2d(%c1, %w2, padding=[1, 1], groups=8));
              let %f = add(nn.global_avg_pool2d(%c2), nn.global_max_pool2d(%c1));
              let %y = nn.dense(reshape(%f, newshape=[2, 8]), %w3);
              sum(multiply(%y, %y))
            }
            """;

    @Test
    void lenetGradientCompiledEqualsTheInterpreter(@TempDir Path dir) {
        NDArray oneHot = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {0, 1, 0, 0, 0, 1});
        // stride-1 convolutions: the data adjoint is a convolution by the flipped weight (reverse), not conv2d_transpose
        assertCompiledGradientMatches(LENET, Map.of("t", oneHot), dir, List.of("reverse(", "nn.max_pool2d_grad(", "nn.avg_pool2d_grad("));
    }

    @Test
    void depthwiseAndGlobalPoolGradientCompiledEqualsTheInterpreter(@TempDir Path dir) {
        assertCompiledGradientMatches(DEPTHWISE, Map.of(), dir, List.of("nn.conv2d_transpose(", "nn.max_pool2d_grad("));
    }

    /**
     * Differentiates {@code program} (its parameters named in {@code fixed} get those values, the others seeded
     * uniform values in [-1, 1)), simplifies and optimizes the gradient, compiles it into {@code dir} and compares
     * every output (the loss, then each parameter's adjoint) with the interpreter's run of the unoptimized gradient;
     * {@code ops} must survive optimization, so that their computes are what runs.
     */
    private static void assertCompiledGradientMatches(String program, Map<String, NDArray> fixed, Path dir, List<String> ops) {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = ReverseModeTest.parse(program);
        IRModule grad = ReverseMode.gradient(m, "main");
        IRModule simple = GradientPipeline.simplify(grad);
        String text = RelayPrinter.print(simple);
        assertTrue(!text.contains("ref") && !text.contains("fn ("), "closures and references remain after partial evaluation:\n" + text);
        IRModule opt = OptPipeline.optimize(simple, 3);
        String optText = RelayPrinter.print(opt);
        for (String op : ops) {
            assertTrue(optText.contains(op), "the optimized gradient should still call " + op + "\n" + optText);
        }
        List<NDArray> in = new ArrayList<>();
        long seed = 1;
        for (Var p : m.main().orElseThrow().params()) {
            NDArray v = GradientCheck.uniform((TensorType) p.annotation(), -1, 1, seed++);
            in.add(fixed.getOrDefault(p.name(), v));
        }
        assertTrue(m.main().orElseThrow().params().stream().map(Var::name).toList().containsAll(fixed.keySet()), "no parameter " + fixed.keySet());
        ArtifactCompiler.compile(opt, CompileOptions.host(3), dir);
        List<NDArray> want = new ArrayList<>();
        flatten(Interpreter.run(grad, "main", in.toArray(NDArray[]::new)), want);
        assertEquals(1 + in.size(), want.size());
        try (var model = CompiledModel.load(dir)) {
            List<NDArray> got = model.run(in);
            assertEquals(want.size(), got.size());
            for (int i = 0; i < want.size(); i++) {
                NDArray e = want.get(i), a = got.get(i);
                assertArrayEquals(e.shape(), a.shape(), "output " + i);
                double scale = 0, diff = 0;
                for (int j = 0; j < e.elementCount(); j++) {
                    scale = Math.max(scale, Math.abs(e.getDouble(j)));
                    diff = Math.max(diff, Math.abs(e.getDouble(j) - a.getDouble(j)));
                }
                assertTrue(scale > 0, "output " + i + " is all zeros: the check would be vacuous");
                assertTrue(diff <= TOLERANCE * scale, "output " + i + ": max difference " + diff + " against max magnitude " + scale);
            }
        }
    }

    private static void flatten(Value v, List<NDArray> out) {
        switch (v) {
            case TensorValue t -> out.add(t.data());
            case TupleValue t -> {
                for (Value f : t.fields()) flatten(f, out);
            }
            default -> throw new AssertionError("unexpected value " + v);
        }
    }
}
