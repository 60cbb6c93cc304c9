package dev.relayfarm.quantize;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No stack overflow on 100,000-node graphs: annotate walks up a 100,000-relu chain to place the dense's data point
 * at the input, calibration instruments and runs it, realize rewrites it all.
 */
class QuantizeDeepTest {
    @Test
    void aHundredThousandReluChainBeforeADense() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 4));
        Expr cur = x;
        for (int i = 0; i < 100_000; i++) cur = Call.op("nn.relu", cur);
        Constant w = new Constant(NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 4}, new double[] {1, 2, 3, 4, -1, -2, -3, -4}));
        IRModule m = TypeInference.infer(IRModule.fromMain(new Function(List.of(x), Call.op("nn.dense", cur, w)))).module();
        NDArray in = NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 4}, new double[] {0.5, 1, 0, 2});
        Quantizer.Result r = Quantizer.quantize(m, List.of(List.of(in)), QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.MINMAX));
        assertEquals(List.of("input", "weight"), r.calibration().points().stream().map(Calibration.PointScale::kind).toList());
        assertEquals(2.0, r.calibration().points().get(0).thresholds()[0], 1e-9);
        long int8Relus = 0, casts = 0;
        for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow().body())) {
            if (e instanceof Call c && c.callee() instanceof Op op && op.name().equals("nn.relu")) int8Relus++;
            if (e instanceof Call c && c.callee() instanceof Op op && op.name().equals("cast")) casts++;
        }
        assertEquals(100_000, int8Relus);
        assertEquals(2, casts, "quantize the input once, dequantize the result once");
    }
}
