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

    static List<NDArray> inputs(IRModule m, double lo, double hi) {
        List<NDArray> out = new ArrayList<>();
        long seed = 1;
        for (var p : m.main().orElseThrow().params()) out.add(GradientCheck.uniform((TensorType) p.annotation(), lo, hi, seed++));
        return out;
    }
}
