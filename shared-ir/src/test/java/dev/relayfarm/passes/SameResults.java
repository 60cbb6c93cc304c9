package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Semantic check for passes: {@code @main} of two modules, run by the interpreter on the same
 * random inputs, must give the same values (tensors within {@code tolerance}, tuples field by field).
 * Inputs are drawn from the parameters' static tensor types: floats in [-2, 2), integers in [0, 4),
 * booleans at random.
 */
public final class SameResults {
    private SameResults() {}

    public static void assertSameResults(IRModule before, IRModule after, long seed, Tolerance tolerance) {
        List<NDArray> inputs = randomInputs(before, seed);
        Value want = Interpreter.runMain(before, inputs.toArray(NDArray[]::new));
        Value got = Interpreter.runMain(after, inputs.toArray(NDArray[]::new));
        compare("result", got, want, tolerance);
    }

    public static List<NDArray> randomInputs(IRModule module, long seed) {
        Random rnd = new Random(seed);
        List<NDArray> out = new ArrayList<>();
        for (Var p : module.main().orElseThrow().params()) out.add(random(p.annotation(), rnd, p.name()));
        return out;
    }

    private static NDArray random(Type t, Random rnd, String name) {
        if (!(t instanceof TensorType tt)) throw new IllegalArgumentException("parameter %" + name + " is not a tensor: " + t);
        int[] shape = new int[tt.shape().size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(tt.shape().get(i) instanceof Dim.Int(long n))) throw new IllegalArgumentException("parameter %" + name + " has a non-static shape: " + t);
            shape[i] = (int) n;
        }
        DType dt = tt.dtype();
        NDArray a = NDArray.zeros(dt, shape);
        for (int i = 0; i < a.size(); i++) {
            if (dt.isFloat()) a.setDouble(i, rnd.nextDouble() * 4 - 2);
            else if (dt.equals(DType.BOOL)) a.setLong(i, rnd.nextBoolean() ? 1 : 0);
            else a.setLong(i, rnd.nextInt(4));
        }
        return a;
    }

    private static void compare(String where, Value got, Value want, Tolerance tol) {
        switch (want) {
            case TensorValue(NDArray w) -> {
                if (!(got instanceof TensorValue(NDArray g))) {
                    fail(where + ": expected a tensor, got " + got);
                    return;
                }
                tol.compare(g, w).ifPresent(m -> fail(where + ": " + m.message()));
            }
            case TupleValue(List<Value> ws) -> {
                if (!(got instanceof TupleValue(List<Value> gs))) {
                    fail(where + ": expected a tuple, got " + got);
                    return;
                }
                assertEquals(ws.size(), gs.size(), where + ": tuple size");
                for (int i = 0; i < ws.size(); i++) compare(where + "." + i, gs.get(i), ws.get(i), tol);
            }
            default -> fail(where + ": cannot compare " + want.getClass().getSimpleName() + " values");
        }
    }
}
