package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.WellFormed;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The generator's promises: programs are well-formed, type-check, run to finite values, and cover what they claim. */
class TypedProgramsTest {
    private static final int N = 200;

    @Test
    void programsTypeCheckAndRunToFiniteValues() {
        for (long seed = 0; seed < N; seed++) {
            IRModule m = TypedPrograms.generate(seed);
            String text = RelayPrinter.print(m);
            try {
                assertEquals(List.of(), WellFormed.problems(m));
                IRModule typed = TypeInference.infer(m).module();
                Value v = Interpreter.runMain(typed, SameResults.randomInputs(typed, seed).toArray(NDArray[]::new));
                assertFinite(v);
            } catch (RuntimeException | AssertionError e) {
                fail("seed " + seed + ": " + e + "\n" + text, e);
            }
        }
    }

    @Test
    void sameSeedSameProgram() {
        for (long seed = 0; seed < 20; seed++) {
            assertTrue(StructuralEquality.equal(TypedPrograms.generate(seed), TypedPrograms.generate(seed)), "seed " + seed);
        }
    }

    /** Every operator and node kind the generator documents shows up in the first N programs. */
    @Test
    void coversOperatorsAndNodeKinds() {
        Set<String> ops = new TreeSet<>();
        Map<String, Integer> kinds = new HashMap<>();
        for (long seed = 0; seed < N; seed++) {
            IRModule m = TypedPrograms.generate(seed);
            if (m.functions().size() > 1) kinds.merge("GlobalFunction", 1, Integer::sum);
            for (Function f : m.functions().values()) {
                for (Expr e : ExprTraversal.postOrder(f)) {
                    kinds.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                    if (e instanceof Call c && c.callee() instanceof Op op) ops.add(op.name());
                }
            }
        }
        for (String op : List.of("add", "multiply", "subtract", "divide", "exp", "tanh", "sigmoid", "nn.relu", "clip", "log",
                "sqrt", "reshape", "transpose", "expand_dims", "squeeze", "concatenate", "strided_slice", "sum", "mean", "max",
                "nn.conv2d", "nn.bias_add", "nn.batch_norm", "nn.dropout", "nn.dense", "nn.max_pool2d", "nn.avg_pool2d",
                "nn.global_avg_pool2d", "nn.softmax", "nn.batch_flatten", "less")) {
            assertTrue(ops.contains(op), "never generated " + op + "; generated " + ops);
        }
        for (String kind : List.of("Let", "If", "Tuple", "TupleGetItem", "Function", "Constant", "RefCreate", "RefRead",
                "RefWrite", "GlobalVar", "GlobalFunction")) {
            assertTrue(kinds.getOrDefault(kind, 0) > 0, "never generated " + kind + "; generated " + kinds);
        }
    }

    private static void assertFinite(Value v) {
        switch (v) {
            case TensorValue(NDArray a) -> {
                for (int i = 0; i < a.size(); i++) {
                    if (!Double.isFinite(a.getDouble(i))) fail("non-finite result at " + i + ": " + a.getDouble(i));
                }
            }
            case TupleValue(List<Value> fs) -> fs.forEach(TypedProgramsTest::assertFinite);
            default -> fail("unexpected result " + v);
        }
    }
}
