package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.text.RelayPrinter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reverse-mode gradient of take (with an axis) and gather_nd compiles to native code: their adjoints
 * are scatter_elements / scatter_nd with reduction add, which need the scatter computes. Duplicate and
 * (for gather_nd) negative indices make the scatters accumulate and wrap.
 */
class GatherGradientCompileTest {
    @Test
    void takeAndGatherNdGradientCompilesAndMatchesTheInterpreter(@TempDir Path dir) {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = ReverseModeTest.parse("""
                def @main(%x: Tensor[(4, 5), float32], %i: Tensor[(2, 3), int64], %y: Tensor[(3, 4, 2), float32], %j: Tensor[(2, 5), int64]) {
                  let %a = take(%x, %i, axis=1);
                  let %b = gather_nd(%y, %j);
                  add(sum(multiply(%a, sin(%a))), sum(multiply(%b, %b)))
                }
                """);
        IRModule grad = ReverseMode.gradient(m, "main");
        IRModule simple = GradientPipeline.simplify(grad);
        String text = RelayPrinter.print(simple);
        assertTrue(text.contains("scatter_elements") && text.contains("scatter_nd"), "the gradient should scatter:\n" + text);
        IRModule opt = OptPipeline.optimize(simple, 3);
        List<NDArray> in = List.of(
                GradientCheck.uniform(TensorType.of(DType.FLOAT32, 4, 5), -1, 1, 1),
                // column 1 of x read three times, column 4 twice
                NDArray.fromLongs(DType.INT64, new int[] {2, 3}, new long[] {1, 4, 1, 0, 1, 4}),
                GradientCheck.uniform(TensorType.of(DType.FLOAT32, 3, 4, 2), -1, 1, 2),
                // (row, column) pairs as columns: (2, 1), (-1, 3) = (2, 3), (0, -4) = (0, 0), (2, 1) again, (1, 2)
                NDArray.fromLongs(DType.INT64, new int[] {2, 5}, new long[] {2, -1, 0, 2, 1, 1, 3, -4, 1, 2}));
        ArtifactCompiler.compile(opt, CompileOptions.host(3), dir);
        List<NDArray> expected = new ArrayList<>();
        flatten(Interpreter.run(grad, "main", in.toArray(NDArray[]::new)), expected);
        try (var model = CompiledModel.load(dir)) {
            List<NDArray> got = model.run(in);
            assertEquals(expected.size(), got.size());
            for (int i = 0; i < expected.size(); i++) {
                NDArray e = expected.get(i), g = got.get(i);
                assertEquals(e.elementCount(), g.elementCount(), "output " + i);
                for (int k = 0; k < e.elementCount(); k++) {
                    assertEquals(e.getDouble(k), g.getDouble(k), 1e-5 + 1e-5 * Math.abs(e.getDouble(k)), "output " + i + " element " + k);
                }
            }
            // the gradient of x is not trivially zero: column 1 gets three adjoints
            double colOne = 0;
            for (int r = 0; r < 4; r++) colOne += Math.abs(got.get(1).getDouble(r * 5 + 1));
            assertTrue(colOne > 0, "x's adjoint in column 1 is zero");
        }
    }

    private static void flatten(Object v, List<NDArray> out) {
        switch (v) {
            case TensorValue t -> out.add(t.data());
            case TupleValue t -> {
                for (Object f : t.fields()) flatten(f, out);
            }
            default -> throw new AssertionError("unexpected value " + v);
        }
    }
}
