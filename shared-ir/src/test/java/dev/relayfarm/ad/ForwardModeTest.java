package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Forward mode in float64: the JVP along a random direction v equals (a) the central difference
 * {@code (L(x + h v) - L(x - h v)) / 2h} and (b), where every operator of the program has a reverse rule, the
 * reverse-mode gradient dotted with v; relative error below 1e-5. L contracts the outputs with fixed random
 * weights ({@link GradientCheck#withObjective}), so every output element counts.
 */
class ForwardModeTest {
    static final double TOLERANCE = 1e-5;
    static final double H = 1e-6;

    /** One case per tangent rule at least (the op is named first); inputs from [lo, hi). */
    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("add", "def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { add(%a, %b) }"),
                GradientCase.of("subtract", "def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { subtract(%a, %b) }"),
                GradientCase.of("multiply", "def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(1, 3), float64]) { multiply(%a, %b) }"),
                GradientCase.of("divide", "def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { divide(%a, %b) }").range(0.5, 2),
                GradientCase.of("negative", "def @main(%a: Tensor[(2, 3), float64]) { negative(%a) }"),
                GradientCase.of("exp", "def @main(%a: Tensor[(2, 3), float64]) { exp(%a) }"),
                GradientCase.of("log", "def @main(%a: Tensor[(2, 3), float64]) { log(%a) }").range(0.5, 2),
                GradientCase.of("tanh", "def @main(%a: Tensor[(2, 3), float64]) { tanh(%a) }"),
                GradientCase.of("sigmoid", "def @main(%a: Tensor[(2, 3), float64]) { sigmoid(%a) }"),
                GradientCase.of("sqrt", "def @main(%a: Tensor[(2, 3), float64]) { sqrt(%a) }").range(0.5, 2),
                GradientCase.of("power", "def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { power(%a, %b) }").range(0.5, 2),
                GradientCase.of("power", "def @main(%a: Tensor[(2, 3), float64]) { power(%a, 3f64) }").range(-2, -0.5),
                GradientCase.of("maximum", "def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { maximum(%a, %b) }"),
                GradientCase.of("minimum", "def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { minimum(%a, %b) }"),
                GradientCase.of("where", """
                        def @main(%c: Tensor[(2, 3), float64], %a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { where(greater(%c, 0f64), %a, %b) }"""),
                GradientCase.of("sum", "def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[1]) }"),
                GradientCase.of("sum", "def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[0, 2], keepdims=True) }"),
                GradientCase.of("mean", "def @main(%a: Tensor[(2, 3, 4), float64]) { mean(%a, axis=[-1]) }"),
                GradientCase.of("reshape", "def @main(%a: Tensor[(2, 3, 4), float64]) { reshape(%a, newshape=[4, -1]) }"),
                GradientCase.of("transpose", "def @main(%a: Tensor[(2, 3, 4), float64]) { transpose(%a, axes=[1, 0, 2]) }"),
                GradientCase.of("expand_dims", "def @main(%a: Tensor[(2, 3), float64]) { expand_dims(%a, axis=1, num_newaxis=2) }"),
                GradientCase.of("squeeze", "def @main(%a: Tensor[(2, 1, 3), float64]) { squeeze(%a, axis=[1]) }"),
                GradientCase.of("broadcast_to", "def @main(%a: Tensor[(3), float64]) { broadcast_to(%a, shape=[2, 3]) }"),
                GradientCase.of("concatenate", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 2), float64]) { concatenate((%a, %b), axis=1) }"""),
                GradientCase.of("nn.dense", "def @main(%x: Tensor[(2, 4), float64], %w: Tensor[(3, 4), float64]) { nn.dense(%x, %w) }"),
                GradientCase.of("nn.matmul", "def @main(%a: Tensor[(2, 4), float64], %b: Tensor[(4, 3), float64]) { nn.matmul(%a, %b) }"),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(4, 2), float64], %b: Tensor[(3, 4), float64]) { nn.matmul(%a, %b, transpose_a=True, transpose_b=True) }"""),
                GradientCase.of("nn.bias_add", "def @main(%x: Tensor[(2, 3, 2, 2), float64], %b: Tensor[(3), float64]) { nn.bias_add(%x, %b) }"),
                GradientCase.of("nn.relu", "def @main(%x: Tensor[(2, 3), float64]) { nn.relu(%x) }"),
                GradientCase.of("nn.softmax", "def @main(%x: Tensor[(2, 4), float64]) { nn.softmax(%x) }"),
                GradientCase.of("nn.softmax", "def @main(%x: Tensor[(2, 3, 2), float64]) { nn.softmax(%x, axis=1) }"),
                GradientCase.of("nn.log_softmax", "def @main(%x: Tensor[(2, 4), float64]) { nn.log_softmax(%x) }"),
                GradientCase.of("nn.log_softmax", "def @main(%x: Tensor[(3, 2), float64]) { nn.log_softmax(%x, axis=0) }"),
                GradientCase.of("nn.cross_entropy", """
                        def @main(%p: Tensor[(3, 4), float64], %t: Tensor[(3, 4), float64]) { nn.cross_entropy(%p, %t) }""").range(0.2, 1),
                GradientCase.of("nn.cross_entropy_with_logits", """
                        def @main(%p: Tensor[(3, 4), float64], %t: Tensor[(3, 4), float64]) { nn.cross_entropy_with_logits(%p, %t) }"""));
    }

    @TestFactory
    Stream<DynamicTest> jvpMatchesFiniteDifferencesAndReverseMode() {
        return cases().stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> {
            IRModule m = ReverseModeTest.parse(c.program());
            assertTrue(c.isCalledIn(m), "the case for " + c.op() + " does not call it");
            check(GradientCheck.withObjective(m, 11), GradientCheck.OBJECTIVE, inputs(m, c.lo(), c.hi(), c.op().hashCode()));
        }));
    }

    @Test
    void everyTangentRuleHasACase() {
        Set<String> covered = cases().stream().map(GradientCase::op).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>(OpTangents.get().differentiable());
        missing.removeAll(covered);
        assertTrue(missing.isEmpty(), "tangent rules without a case: " + missing);
        Set<String> required = Set.of("add", "subtract", "multiply", "divide", "negative", "exp", "log", "tanh", "sigmoid", "sqrt", "power",
                "maximum", "minimum", "sum", "mean", "reshape", "transpose", "nn.dense", "nn.matmul", "nn.bias_add", "nn.relu", "nn.softmax",
                "nn.log_softmax", "concatenate", "expand_dims", "squeeze", "broadcast_to", "nn.cross_entropy", "nn.cross_entropy_with_logits");
        Set<String> absent = new TreeSet<>(required);
        absent.removeAll(OpTangents.get().differentiable());
        assertTrue(absent.isEmpty(), "no tangent rule for " + absent);
    }

    @Test
    void mlpWithCrossEntropyLoss() {
        IRModule m = ReverseModeTest.parse("""
                def @main(%x: Tensor[(4, 5), float64], %w1: Tensor[(6, 5), float64], %b1: Tensor[(6), float64],
                          %w2: Tensor[(3, 6), float64], %b2: Tensor[(3), float64], %t: Tensor[(4, 3), float64]) {
                  let %h = nn.relu(nn.bias_add(nn.dense(%x, %w1), %b1));
                  let %p = nn.softmax(nn.bias_add(nn.dense(%h, %w2), %b2));
                  nn.cross_entropy(%p, %t)
                }
                """);
        check(m, "main", inputs(m, -1, 1, 3));
        IRModule logits = ReverseModeTest.parse("""
                def @main(%x: Tensor[(4, 5), float64], %w1: Tensor[(6, 5), float64], %b1: Tensor[(6), float64],
                          %w2: Tensor[(3, 6), float64], %b2: Tensor[(3), float64], %t: Tensor[(4, 3), float64]) {
                  let %h = tanh(nn.bias_add(nn.dense(%x, %w1), %b1));
                  nn.cross_entropy_with_logits(nn.log_softmax(nn.bias_add(nn.dense(%h, %w2), %b2)), %t)
                }
                """);
        check(logits, "main", inputs(logits, -1, 1, 5));
        // every operator here has a reverse rule already, so this one is always compared with reverse mode too
        IRModule sigmoid = ReverseModeTest.parse("""
                def @main(%x: Tensor[(4, 5), float64], %w: Tensor[(3, 5), float64], %b: Tensor[(3), float64], %t: Tensor[(4, 3), float64]) {
                  nn.cross_entropy(sigmoid(nn.bias_add(nn.dense(nn.relu(%x), %w), %b)), %t)
                }
                """);
        check(sigmoid, "main", inputs(sigmoid, -1, 1, 7));
        assertTrue(operators(sigmoid).stream().allMatch(op -> OpGradients.get().rule(op).isPresent()), "a reverse rule went missing");
    }

    @Test
    void tupleParametersHaveTupleTangents() {
        IRModule jvp = ForwardMode.jvp(ReverseModeTest.parse("""
                def @main(%p: (Tensor[(2), float64], Tensor[(2), float64])) { (multiply(%p.0, %p.1), %p.0) }
                """), "main");
        NDArray a = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {2}, new double[] {2, 3});
        NDArray b = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {2}, new double[] {5, 7});
        NDArray da = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {2}, new double[] {1, 0});
        NDArray db = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {2}, new double[] {0, 1});
        TupleValue r = (TupleValue) Interpreter.run(jvp, "main", List.of(new TupleValue(List.of(new TensorValue(a), new TensorValue(b))),
                new TupleValue(List.of(new TensorValue(da), new TensorValue(db)))));
        TupleValue tangent = (TupleValue) r.get(1);
        NDArray dProduct = ((TensorValue) tangent.get(0)).data(), dFirst = ((TensorValue) tangent.get(1)).data();
        // d(a b) = da b + a db = (1 * 5 + 2 * 0, 0 * 7 + 3 * 1)
        assertEquals(List.of(5.0, 3.0), List.of(dProduct.getDouble(0), dProduct.getDouble(1)));
        assertEquals(List.of(1.0, 0.0), List.of(dFirst.getDouble(0), dFirst.getDouble(1)));
    }

    @Test
    void jvpOfAnMlpLossCompilesToNativeCode(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.relayfarm.kernel.codegen.CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = ReverseModeTest.parse("""
                def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32], %b: Tensor[(3), float32], %t: Tensor[(2, 3), float32]) {
                  nn.cross_entropy(nn.softmax(nn.bias_add(nn.dense(%x, %w), %b)), %t)
                }
                """);
        IRModule jvp = ForwardMode.jvp(m, "main");
        List<NDArray> in = new ArrayList<>();
        long seed = 1;
        for (Var p : m.main().orElseThrow().params()) in.add(GradientCheck.uniform((TensorType) p.annotation(), 0.1, 1, seed++));
        for (Var p : m.main().orElseThrow().params()) in.add(GradientCheck.uniform((TensorType) p.annotation(), -1, 1, seed++));
        TupleValue want = (TupleValue) Interpreter.run(jvp, "main", in.toArray(NDArray[]::new));
        dev.relayfarm.compile.ArtifactCompiler.compile(dev.relayfarm.passes.OptPipeline.optimize(jvp, 3), dev.relayfarm.compile.CompileOptions.host(3), dir);
        try (var model = dev.relayfarm.runtime.CompiledModel.load(dir)) {
            List<NDArray> got = model.run(in);
            assertEquals(2, got.size());
            for (int i = 0; i < 2; i++) assertEquals(scalar(want.get(i)), got.get(i).getDouble(0), 1e-4, "output " + i);
        }
    }

    @Test
    void ifTuplesAndCallsOfGlobalsCarryTheirTangents() {
        IRModule same = ReverseModeTest.parse("""
                def @square(%x: Tensor[(3), float64]) { multiply(%x, %x) }
                def @main(%x: Tensor[(3), float64], %y: Tensor[(3), float64]) {
                  let %pair = (@square(%x), exp(%y));
                  if (greater(sum(%x), 0f64)) { (add(%pair.0, %pair.1), %y) } else { (multiply(%pair.1, %x), %pair.0) }
                }
                """);
        // both branches, chosen by the sign of the first input's sum; the returned tuple is contracted to a scalar
        check(GradientCheck.withObjective(same, 3), GradientCheck.OBJECTIVE, inputs(same, 0.1, 1, 1));
        check(GradientCheck.withObjective(same, 3), GradientCheck.OBJECTIVE, inputs(same, -1, -0.1, 1));
    }

    @Test
    void recursionCarriesTangentsThroughEachCall() {
        // tanh applied k = 3 times by a recursive global; the integer counter has an (integer, zero) tangent too
        IRModule m = ReverseModeTest.parse("""
                def @repeat(%x: Tensor[(3), float64], %k: int32) {
                  if (greater(%k, 0)) { @repeat(tanh(multiply(%x, 2f64)), subtract(%k, 1)) } else { %x }
                }
                def @main(%x: Tensor[(3), float64]) { @repeat(%x, 3) }
                """);
        check(GradientCheck.withObjective(m, 5), GradientCheck.OBJECTIVE, inputs(m, -1, 1, 9));
    }

    @Test
    void squareHasTangentTwoXTimesDirection() {
        IRModule jvp = ForwardMode.jvp(ReverseModeTest.parse("def @main(%x: Tensor[(3), float64]) { multiply(%x, %x) }"), "main");
        NDArray x = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {3}, new double[] {1, -2, 3});
        NDArray v = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT64, new int[] {3}, new double[] {1, 0.5, -1});
        TupleValue r = (TupleValue) Interpreter.run(jvp, "main", x, v);
        NDArray y = ((TensorValue) r.get(0)).data(), dy = ((TensorValue) r.get(1)).data();
        assertEquals(List.of(1.0, 4.0, 9.0), List.of(y.getDouble(0), y.getDouble(1), y.getDouble(2)));
        assertEquals(List.of(2.0, -2.0, -6.0), List.of(dy.getDouble(0), dy.getDouble(1), dy.getDouble(2)));
    }

    @Test
    void anOperatorWithoutATangentRuleIsNamed() {
        GradientException e = assertThrows(GradientException.class,
                () -> ForwardMode.jvp(ReverseModeTest.parse("def @main(%x: Tensor[(3), float64]) { exp(nn.leaky_relu(%x)) }"), "main"));
        assertTrue(e.getMessage().contains("no tangent registered for operator nn.leaky_relu"), e.getMessage());
    }

    @Test
    void aHigherOrderProgramIsRefusedNamingTheNode() {
        GradientException e = assertThrows(GradientException.class, () -> ForwardMode.jvp(ReverseModeTest.parse("""
                def @main(%x: Tensor[(3), float64]) { let %f = fn (%y: Tensor[(3), float64]) { exp(%y) }; %f(%x) }
                """), "main"));
        assertTrue(e.getMessage().contains("function literal"), e.getMessage());
    }

    // ---------------------------------------------------------------- the check

    /**
     * {@code global} of {@code module} returns a scalar L: its JVP at {@code x} along a seeded random direction
     * against the central difference and, when every operator has a reverse rule, against {@code <grad L, v>}.
     */
    static void check(IRModule module, String global, List<NDArray> x) {
        List<NDArray> v = new ArrayList<>();
        for (int i = 0; i < x.size(); i++) v.add(GradientCheck.uniform(type(x.get(i)), -1, 1, 1000 + i));
        IRModule jvp = ForwardMode.jvp(module, global);
        List<Value> args = new ArrayList<>();
        for (NDArray a : x) args.add(new TensorValue(a));
        for (NDArray a : v) args.add(new TensorValue(a));
        TupleValue r = (TupleValue) Interpreter.run(jvp, "main", args);
        Interpreter interp = new Interpreter(module);
        double value = scalar(r.get(0)), tangent = scalar(r.get(1));
        assertEquals(scalar(interp.call(global, x.toArray(NDArray[]::new))), value, 1e-12, "the primal result");
        double fd = (scalar(interp.call(global, step(x, v, H))) - scalar(interp.call(global, step(x, v, -H)))) / (2 * H);
        assertTrue(relative(tangent, fd) < TOLERANCE, "JVP " + tangent + " vs central difference " + fd);
        Set<String> noReverseRule = operators(module).stream()
                .filter(op -> OpGradients.get().rule(op).isEmpty() && !OpGradients.get().isConstant(op)).collect(Collectors.toCollection(TreeSet::new));
        if (noReverseRule.isEmpty()) {
            IRModule grad = ReverseMode.gradient(module, global);
            TupleValue g = (TupleValue) ((TupleValue) Interpreter.run(grad, "main", x.toArray(NDArray[]::new))).get(1);
            double dot = 0;
            for (int i = 0; i < x.size(); i++) {
                NDArray gi = ((TensorValue) g.get(i)).data();
                for (int j = 0; j < gi.elementCount(); j++) dot += gi.getDouble(j) * v.get(i).getDouble(j);
            }
            assertTrue(relative(tangent, dot) < TOLERANCE, "JVP " + tangent + " vs reverse-mode gradient . v " + dot);
        } else {
            System.out.println("ForwardModeTest: no reverse rule for " + noReverseRule + "; checked against finite differences only");
        }
    }

    private static double relative(double a, double b) {
        return Math.abs(a - b) / Math.max(Math.max(Math.abs(a), Math.abs(b)), 1e-12);
    }

    private static NDArray[] step(List<NDArray> x, List<NDArray> v, double h) {
        NDArray[] out = new NDArray[x.size()];
        for (int i = 0; i < out.length; i++) {
            double[] d = new double[x.get(i).elementCount()];
            for (int j = 0; j < d.length; j++) d[j] = x.get(i).getDouble(j) + h * v.get(i).getDouble(j);
            out[i] = NDArray.fromDoubles(x.get(i).dtype(), x.get(i).shape(), d);
        }
        return out;
    }

    /** Every operator called anywhere in the module. */
    static Set<String> operators(IRModule module) {
        Set<String> ops = new TreeSet<>();
        Deque<Expr> todo = new ArrayDeque<>();
        for (Function f : module.functions().values()) todo.push(f.body());
        while (!todo.isEmpty()) {
            Expr e = todo.pop();
            if (e instanceof Op op) ops.add(op.name());
            if (e instanceof Function f) todo.push(f.body());
            else for (Expr c : e.children()) todo.push(c);
        }
        return ops;
    }

    private static List<NDArray> inputs(IRModule m, double lo, double hi, long seed) {
        List<NDArray> out = new ArrayList<>();
        for (Var p : m.main().orElseThrow().params()) out.add(GradientCheck.uniform((TensorType) p.annotation(), lo, hi, seed++));
        return out;
    }

    private static TensorType type(NDArray a) {
        return TensorType.of(a.dtype(), java.util.Arrays.stream(a.shape()).asLongStream().toArray());
    }

    private static double scalar(Value v) {
        return ((TensorValue) v).data().getDouble(0);
    }
}
