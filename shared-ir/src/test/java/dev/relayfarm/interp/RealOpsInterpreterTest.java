package dev.relayfarm.interp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Programs over the real operator library ({@code OpRegistry}), checked against hand-computed values. */
class RealOpsInterpreterTest {
    private static Constant tensor(int[] shape, double... values) {
        return new Constant(NDArray.fromDoubles(DType.FLOAT32, shape, values));
    }

    private static double[] doubles(Value v) {
        NDArray a = v.asTensor();
        double[] out = new double[a.elementCount()];
        for (int i = 0; i < out.length; i++) out[i] = a.getDouble(i);
        return out;
    }

    /**
     * def @main(%x: Tensor[(1, 3), float32]) {
     *   %0 = nn.dense(%x, W1); %1 = nn.bias_add(%0, b1); %2 = nn.relu(%1);
     *   %3 = nn.dense(%2, W2); nn.bias_add(%3, b2)
     * }
     * x = [1, 2, 3]; W1 = [[1,0,0],[0,1,0],[0,0,1],[-1,-1,-1]] gives [1, 2, 3, -6]; + b1 [0.5, -3, 0, 1]
     * = [1.5, -1, 3, -5]; relu = [1.5, 0, 3, 0]; W2 = [[1,1,1,1],[2,0,-1,5]] gives [4.5, 0];
     * + b2 [0.25, -1] = [4.75, -1].
     */
    static IRModule mlp() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 3));
        Expr h = Call.op("nn.dense", x, tensor(new int[] {4, 3}, 1, 0, 0, 0, 1, 0, 0, 0, 1, -1, -1, -1));
        h = Call.op("nn.bias_add", h, tensor(new int[] {4}, 0.5, -3, 0, 1));
        h = Call.op("nn.relu", h);
        h = Call.op("nn.dense", h, tensor(new int[] {2, 4}, 1, 1, 1, 1, 2, 0, -1, 5));
        h = Call.op("nn.bias_add", h, tensor(new int[] {2}, 0.25, -1));
        return IRModule.fromMain(new dev.relayfarm.ir.Function(List.of(x), h));
    }

    @Test
    void smallMlpWithDenseBiasAddRelu() {
        Value out = Interpreter.runMain(mlp(), NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 3}, new double[] {1, 2, 3}));
        assertArrayEquals(new int[] {1, 2}, out.asTensor().shape());
        assertArrayEquals(new double[] {4.75, -1}, doubles(out), 1e-6);
    }

    @Test
    void mlpInputShapeIsCheckedBeforeRunning() {
        InterpreterException e = assertThrows(InterpreterException.class,
                () -> Interpreter.runMain(mlp(), NDArray.zeros(DType.FLOAT32, 2, 3)));
        assertEquals("@main parameter %x expects Tensor[(1, 3), float32], got Tensor[(2, 3), float32]", e.getMessage());
    }

    @Test
    void attributesReachTheKernel() {
        // nn.bias_add(data [2, 3], bias [2], axis=0): the bias runs down the rows.
        Call c = new Call(Op.get("nn.bias_add"), List.of(tensor(new int[] {2, 3}, 0, 0, 0, 0, 0, 0), tensor(new int[] {2}, 1, 2)),
                Attrs.of("axis", AttrValue.of(0)));
        assertArrayEquals(new double[] {1, 1, 1, 2, 2, 2}, doubles(Interpreter.eval(c)), 0);
    }

    @Test
    void sharedActivationFeedsTwoConsumers() {
        // fn (%x) { %r = nn.relu(%x); (%r, nn.relu(%r)) }: one relu node with two consumers.
        Var x = Var.fresh("x");
        Expr r = Call.op("nn.relu", x);
        Expr pair = new dev.relayfarm.ir.Tuple(List.of(r, Call.op("nn.relu", r)));
        Value v = new Interpreter(IRModule.fromMain(new dev.relayfarm.ir.Function(List.of(x), pair)))
                .call("main", NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {-1, 0, 2}));
        TupleValue t = assertInstanceOf(TupleValue.class, v);
        assertArrayEquals(new double[] {0, 0, 2}, doubles(t.get(0)), 0);
        assertArrayEquals(new double[] {0, 0, 2}, doubles(t.get(1)), 0);
    }

    @Test
    void kernelShapeErrorNamesTheOperatorAndSpan() {
        Span at = new Span("mlp.relay", 2, 3);
        Call bad = new Call(Op.get("nn.dense"), List.of(tensor(new int[] {1, 3}, 1, 2, 3), tensor(new int[] {2, 2}, 1, 2, 3, 4)),
                Attrs.EMPTY, List.of(), at);
        InterpreterException e = assertThrows(InterpreterException.class, () -> Interpreter.eval(bad));
        assertTrue(e.getMessage().startsWith("mlp.relay:2:3: operator nn.dense failed on inputs [Tensor[(1, 3), float32], Tensor[(2, 2), float32]]"),
                e.getMessage());
    }

    @Test
    void batchNormReturnsATripleAndProjectionPicksTheNormalizedData() {
        // nn.batch_norm(x=[[3, 2.5]], gamma=1, beta=0, mean=[1, 2], var=[4, 0.25], epsilon=0) = ([[1, 1]], mean, var)
        Call bn = new Call(Op.get("nn.batch_norm"), List.of(tensor(new int[] {1, 2}, 3, 2.5), tensor(new int[] {2}, 1, 1),
                tensor(new int[] {2}, 0, 0), tensor(new int[] {2}, 1, 2), tensor(new int[] {2}, 4, 0.25)),
                Attrs.of("epsilon", AttrValue.of(0.0)));
        TupleValue t = assertInstanceOf(TupleValue.class, Interpreter.eval(bn));
        assertEquals(3, t.fields().size());
        assertArrayEquals(new double[] {1, 2}, doubles(t.get(1)), 0);
        assertArrayEquals(new double[] {1, 1}, doubles(Interpreter.eval(new dev.relayfarm.ir.TupleGetItem(bn, 0))), 0);
    }

    @Test
    void splitGivesATupleEvenWithOneSection() {
        Constant x = tensor(new int[] {4}, 1, 2, 3, 4);
        Call two = new Call(Op.get("split"), List.of(x), Attrs.of("indices_or_sections", AttrValue.of(2)));
        TupleValue halves = assertInstanceOf(TupleValue.class, Interpreter.eval(two));
        assertEquals(2, halves.fields().size());
        assertArrayEquals(new double[] {3, 4}, doubles(halves.get(1)), 0);
        // One section: the kernel returns a single array, the type relation says (Tensor[(4), float32],).
        Call one = new Call(Op.get("split"), List.of(x), Attrs.of("indices_or_sections", AttrValue.of(1)));
        TupleValue whole = assertInstanceOf(TupleValue.class, Interpreter.eval(one));
        assertEquals(1, whole.fields().size());
        assertArrayEquals(new double[] {1, 2, 3, 4}, doubles(whole.get(0)), 0);
    }
}
