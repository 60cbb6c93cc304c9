package dev.relayfarm.interp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.text.RelayParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Relay text in, value out: the shared sample programs under {@code src/test/resources/relay/} and
 * the examples of "Expressions in Relay", parsed and run on the real operator library.
 */
class InterpreterTextTest {
    private static IRModule resource(String name) throws IOException {
        try (InputStream in = InterpreterTextTest.class.getResourceAsStream("/relay/" + name)) {
            if (in == null) throw new IllegalStateException("missing sample " + name);
            return RelayParser.parseModule(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
        }
    }

    private static Value runText(String source, NDArray... args) {
        return Interpreter.runMain(RelayParser.parseModule(source, "test.relay"), args);
    }

    private static double scalar(Value v) {
        NDArray a = v.asTensor();
        assertEquals(1, a.elementCount(), a.toString());
        return a.getDouble(0);
    }

    private static double[] doubles(Value v) {
        NDArray a = v.asTensor();
        double[] out = new double[a.elementCount()];
        for (int i = 0; i < out.length; i++) out[i] = a.getDouble(i);
        return out;
    }

    private static NDArray f32(int[] shape, double... values) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, values);
    }

    /** {@code match (%a, %b)}: the match's parentheses hold a tuple's fields (issue #19: the parser took one expression). */
    @Test
    void matchOnATupleScrutineeChoosesByBothFields() {
        String src = """
                type Option[A] {
                  Some(A),
                  None,
                }
                def @first(%a: Option[int32], %b: Option[int32]) -> int32 {
                  match (%a, %b) {
                    (Some(%x), _) => %x,
                    (_, Some(%y)) => 10 + %y,
                    _ => 0,
                  }
                }
                def @main() -> (int32, int32, int32) {
                  (@first(Some(1), Some(2)), @first(None, Some(2)), @first(None, None))
                }
                """;
        Value v = runText(src);
        List<Value> fields = ((TupleValue) v).fields();
        assertEquals(List.of(1.0, 12.0, 0.0), fields.stream().map(InterpreterTextTest::scalar).toList());
        // the same as the tuple written out: match ((%a, %b))
        Value written = runText(src.replace("match (%a, %b)", "match ((%a, %b))"));
        assertEquals(List.of(1.0, 12.0, 0.0), ((TupleValue) written).fields().stream().map(InterpreterTextTest::scalar).toList());
    }

    @Test
    void docShadowingExampleIsFour() {
        String src = """
                def @main() {
                  let %a = 1;
                  let %b = 2 * %a;  // %b = 2
                  let %a = %a + %a; // %a = 2. %a is shadowed
                  %a + %b           // has value 2 + 2 = 4
                }
                """;
        assertEquals(4.0, scalar(runText(src)));
    }

    @Test
    void docCallExampleIs22() {
        String src = """
                def @main() {
                  let %c = 1f;
                  let %f = fn(%x : Tensor[(), float32], %y : Tensor[(), float32]) { %x + %y + %c };
                  %f(10f, 11f)
                }
                """;
        assertEquals(22.0, scalar(runText(src)));
    }

    @Test
    void docClosureExampleEvaluatesToZeros() {
        String src = """
                def @main(%zeros: Tensor[(10, 10), float32], %ones: Tensor[(10, 10), float32]) {
                  let %g = fn() {
                    let %x = %zeros;
                    // %x is a free variable in the below function
                    fn(%y) { %y * %x }
                  };
                  // the %x in %g's body is not in scope anymore
                  // %f is a closure where %x maps to zeros
                  let %f = %g();
                  let %x = %ones;
                  %f(%x)
                }
                """;
        double[] ones = new double[100];
        java.util.Arrays.fill(ones, 1);
        Value v = runText(src, NDArray.zeros(DType.FLOAT32, 10, 10), f32(new int[] {10, 10}, ones));
        assertArrayEquals(new double[100], doubles(v));
    }

    @Test
    void sampleShadowing() throws IOException {
        assertEquals(8.0, scalar(Interpreter.runMain(resource("shadowing.relay"))));
    }

    @Test
    void sampleClosureAddsTheCapturedParameter() throws IOException {
        assertEquals(5.0, scalar(Interpreter.runMain(resource("closure.relay"), NDArray.scalar(3f))));
    }

    @Test
    void sampleFactorial() throws IOException {
        assertEquals(120.0, scalar(Interpreter.runMain(resource("factorial.relay"), NDArray.scalar(5))));
        assertEquals(3628800.0, scalar(Interpreter.runMain(resource("factorial.relay"), NDArray.scalar(10))));
    }

    @Test
    void sampleAckermann() throws IOException {
        assertEquals(9.0, scalar(Interpreter.runMain(resource("ackermann.relay"))));
        assertEquals(61.0, scalar(Interpreter.run(resource("ackermann.relay"), "ackermann", NDArray.scalar(3), NDArray.scalar(3))));
    }

    @Test
    void sampleNatAddition() throws IOException {
        assertEquals(5.0, scalar(Interpreter.runMain(resource("nat.relay"))));
    }

    @Test
    void sampleListMapFold() throws IOException {
        assertEquals(12.0, scalar(Interpreter.runMain(resource("list_map_fold.relay"))));
    }

    @Test
    void sampleMatchPartialAndItsFailure() throws IOException {
        IRModule m = resource("match_partial.relay");
        assertEquals(6.0, scalar(Interpreter.runMain(m)));
        Interpreter in = new Interpreter(m);
        Value none = in.evaluate(m.constructor("None_").orElseThrow());
        InterpreterException e = assertThrows(InterpreterException.class, () -> in.call("unwrap", List.of(none)));
        assertTrue(e.getMessage().matches("match_partial\\.relay:\\d+:\\d+: no clause of the match\\? matches the value None_"), e.getMessage());
    }

    @Test
    void sampleRefsCountsTwo() throws IOException {
        assertEquals(2.0, scalar(Interpreter.runMain(resource("refs.relay"))));
    }

    @Test
    void sampleTuplesTakesATupleParameter() throws IOException {
        IRModule m = resource("tuples.relay");
        Value t = Value.tuple(Value.tensor(f32(new int[] {2}, 1.5, 2.5)), Value.tuple(Value.tensor(NDArray.scalar(7)), Value.tensor(NDArray.scalar(true))));
        TupleValue r = assertInstanceOf(TupleValue.class, Interpreter.run(m, "main", List.of(t)));
        assertEquals(7.0, scalar(r.get(0)));
        Value f = Value.tuple(Value.tensor(f32(new int[] {2}, 1.5, 2.5)), Value.tuple(Value.tensor(NDArray.scalar(7)), Value.tensor(NDArray.scalar(false))));
        assertEquals(1.0, scalar(((TupleValue) Interpreter.run(m, "main", List.of(f))).get(0)));
        InterpreterException e = assertThrows(InterpreterException.class,
                () -> Interpreter.run(m, "main", List.of(Value.tuple(Value.tensor(f32(new int[] {3}, 1, 2, 3)), Value.UNIT))));
        assertTrue(e.getMessage().endsWith("@main parameter %t expects (Tensor[(2), float32], (int32, bool)), got (Tensor[(3), float32], ())"), e.getMessage());
    }

    @Test
    void sampleMlpWithZeroSecondLayerIsSoftmaxOfTheBias() throws IOException {
        Random rnd = new Random(7);
        double[] x = new double[784];
        double[] w1 = new double[128 * 784];
        double[] b1 = new double[128];
        for (int i = 0; i < x.length; i++) x[i] = rnd.nextGaussian();
        for (int i = 0; i < w1.length; i++) w1[i] = rnd.nextGaussian();
        for (int i = 0; i < b1.length; i++) b1[i] = rnd.nextGaussian();
        double[] b2 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        Value out = Interpreter.runMain(resource("mlp.relay"), f32(new int[] {1, 784}, x), f32(new int[] {128, 784}, w1),
                f32(new int[] {128}, b1), NDArray.zeros(DType.FLOAT32, 10, 128), f32(new int[] {10}, b2));
        assertArrayEquals(new int[] {1, 10}, out.asTensor().shape());
        double sum = 0;
        for (double b : b2) sum += Math.exp(b);
        double[] got = doubles(out);
        for (int i = 0; i < 10; i++) assertEquals(Math.exp(i) / sum, got[i], 1e-6);
    }

    @Test
    void sampleDataflowSharedRunsTheDag() throws IOException {
        Value v = Interpreter.runMain(resource("dataflow_shared.relay"), f32(new int[] {4}, 1, 2, 3, 4), f32(new int[] {4}, 1, 1, 1, 1));
        TupleValue t = assertInstanceOf(TupleValue.class, v);
        assertArrayEquals(new double[] {4, 6, 8, 10}, doubles(t.get(0)));
        assertArrayEquals(new double[] {-3, -4, -5, -6}, doubles(t.get(1)));
        assertEquals(DType.BOOL, t.get(2).asTensor().dtype());
        assertArrayEquals(new double[] {1, 1, 1, 1}, doubles(t.get(2)));
    }

    @Test
    void natRecursionTenThousandDeepFromText() {
        String src = """
                type Nat { Z, S(Nat) }
                def @of_int(%i: int32) -> Nat { if (%i == 0) { Z } else { S(@of_int(%i - 1)) } }
                def @to_int(%n: Nat) -> int32 { match (%n) { Z => 0, S(%p) => 1 + @to_int(%p) } }
                def @main(%i: int32) -> int32 { @to_int(@of_int(%i)) }
                """;
        assertEquals(10_000.0, scalar(runText(src, NDArray.scalar(10_000))));
    }
}
