package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReverseModeTest {
    static IRModule parse(String text) {
        return TypeInference.infer(RelayParser.parseModule("#[version = \"0.0.5\"]\n" + text, "test")).module();
    }

    @Test
    void squareHasGradientTwoX() {
        IRModule grad = ReverseMode.gradient(parse("def @main(%x: Tensor[(3), float64]) { multiply(%x, %x) }"), "main");
        NDArray x = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {3}, new double[] {1, -2, 3});
        TupleValue r = (TupleValue) Interpreter.run(grad, "main", x);
        NDArray dx = ((TensorValue) ((TupleValue) r.get(1)).get(0)).data();
        assertEquals(2, dx.getDouble(0));
        assertEquals(-4, dx.getDouble(1));
        assertEquals(6, dx.getDouble(2));
    }

    @Test
    void mlpMatchesFiniteDifferences() {
        IRModule m = parse("""
                def @main(%x: Tensor[(2, 4), float64], %w: Tensor[(3, 4), float64], %b: Tensor[(3), float64]) {
                  let %h = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
                  sum(multiply(%h, %h), axis=[1])
                }
                """);
        GradientCheck.Report report = GradientCheck.check(m, inputs(m, -1, 1), 1e-6, 7);
        assertTrue(report.worstRelativeError() < 1e-5, report.toString());
    }

    @Test
    void mlpGradientCompilesToNativeCodeAfterPartialEvaluation(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.relayfarm.kernel.codegen.CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = parse("""
                def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32], %b: Tensor[(3), float32]) {
                  let %h = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
                  sum(multiply(%h, %h))
                }
                """);
        IRModule grad = ReverseMode.gradient(m, "main");
        IRModule simple = GradientPipeline.simplify(grad);
        String text = RelayPrinter.print(simple);
        assertTrue(!text.contains("ref") && !text.contains("fn ("), "closures and references remain after partial evaluation:\n" + text);
        IRModule opt = dev.relayfarm.passes.OptPipeline.optimize(simple, 3);
        List<NDArray> in = List.of(GradientCheck.uniform(TensorType.of(dev.relayfarm.ir.DType.FLOAT32, 2, 4), -1, 1, 1),
                GradientCheck.uniform(TensorType.of(dev.relayfarm.ir.DType.FLOAT32, 3, 4), -1, 1, 2),
                GradientCheck.uniform(TensorType.of(dev.relayfarm.ir.DType.FLOAT32, 3), -1, 1, 3));
        dev.relayfarm.compile.ArtifactCompiler.compile(opt, dev.relayfarm.compile.CompileOptions.host(3), dir);
        TupleValue want = (TupleValue) Interpreter.run(grad, "main", in.toArray(NDArray[]::new));
        try (var model = dev.relayfarm.runtime.CompiledModel.load(dir)) {
            List<NDArray> got = model.run(in);
            assertEquals(4, got.size());
            List<NDArray> expected = List.of(((TensorValue) want.get(0)).data(), ((TensorValue) ((TupleValue) want.get(1)).get(0)).data(),
                    ((TensorValue) ((TupleValue) want.get(1)).get(1)).data(), ((TensorValue) ((TupleValue) want.get(1)).get(2)).data());
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < expected.get(i).elementCount(); j++) {
                    assertEquals(expected.get(i).getDouble(j), got.get(i).getDouble(j), 1e-4, "output " + i + " element " + j);
                }
            }
        }
    }

    static List<NDArray> inputs(IRModule m, double lo, double hi) {
        List<NDArray> out = new ArrayList<>();
        long seed = 1;
        for (var p : m.main().orElseThrow().params()) out.add(GradientCheck.uniform((TensorType) p.annotation(), lo, hi, seed++));
        return out;
    }
}
