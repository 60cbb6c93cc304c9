package dev.relayfarm.interp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.InterpreterOptions.Budget;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.text.RelayParser;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue #13: a runaway program stops in seconds with the budget that ran out named, never by running
 * forever or exhausting the heap. Each case runs with the default budgets unless it tests another.
 */
class InterpreterBudgetTest {
    static final String LOOP = """
            def @loop(%n: int32) -> int32 {
              @loop(%n + 1)
            }
            """;

    static InterpreterException stops(String program, String global, InterpreterOptions options, NDArray... args) {
        IRModule m = RelayParser.parseModule(program, "runaway.relay");
        long t0 = System.nanoTime();
        InterpreterException e = assertThrows(InterpreterException.class, () -> new Interpreter(m, options).call(global, args));
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(seconds < 20, "stopped only after " + seconds + " s: " + e.getMessage());
        return e;
    }

    @Test
    void endlessTailRecursionRunsOutOfSteps() {
        InterpreterException e = stops(LOOP, "loop", InterpreterOptions.DEFAULT, NDArray.scalar(0));
        assertEquals(Budget.STEPS, e.budget());
        assertTrue(e.getMessage().contains("step budget of " + InterpreterOptions.DEFAULT_MAX_STEPS + " steps used up in @loop (called at runaway.relay:2:3)"), e.getMessage());
        assertTrue(e.getMessage().contains("InterpreterOptions.maxSteps (relayc run --max-steps)"), e.getMessage());
    }

    @Test
    void endlessNonTailRecursionRunsOutOfStackNotHeap() {
        String deep = """
                def @deep(%n: int32) -> int32 {
                  %n + @deep(%n + 1)
                }
                """;
        InterpreterException e = stops(deep, "deep", InterpreterOptions.DEFAULT, NDArray.scalar(0));
        assertEquals(Budget.STACK_DEPTH, e.budget());
        assertTrue(e.getMessage().contains("stack budget of " + InterpreterOptions.DEFAULT_MAX_STACK_DEPTH + " continuation frames used up"), e.getMessage());
        assertTrue(e.getMessage().contains("in @deep"), e.getMessage());
    }

    @Test
    void exponentialTensorGrowthStopsBeforeTheAllocation() {
        String grow = """
                def @grow(%t: Tensor[(?), float32]) -> Tensor[(?), float32] {
                  @grow(concatenate((%t, %t), axis=0))
                }
                """;
        InterpreterException e = stops(grow, "grow", InterpreterOptions.DEFAULT, NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT32, new int[] {1}, new double[] {1}));
        assertEquals(Budget.TENSOR_BYTES, e.budget());
        // 2^28 floats are 1 GiB, the budget; the next concatenation would make 2 GiB.
        assertTrue(e.getMessage().contains("operator concatenate would produce 2147483648 bytes, over the tensor budget of 1073741824 bytes in @grow"), e.getMessage());
    }

    @Test
    void aHugeZerosIsRefusedBeforeAllocating() {
        InterpreterException e = assertThrows(InterpreterException.class,
                () -> Interpreter.eval(RelayParser.parseExpr("zeros(shape=[40000, 40000], dtype=\"float32\")")));
        assertEquals(Budget.TENSOR_BYTES, e.budget());
    }

    @Test
    void timeoutStopsALoop() {
        InterpreterException e = stops(LOOP, "loop", InterpreterOptions.DEFAULT.withMaxSteps(Long.MAX_VALUE).withTimeout(Duration.ofMillis(300)), NDArray.scalar(0));
        assertEquals(Budget.TIMEOUT, e.budget());
        assertTrue(e.getMessage().contains("time budget of 300 ms used up"), e.getMessage());
    }

    @Test
    void anInterruptStopsEvaluationAndStaysSet() throws InterruptedException {
        IRModule m = RelayParser.parseModule(LOOP, "runaway.relay");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                new Interpreter(m, InterpreterOptions.DEFAULT.withMaxSteps(Long.MAX_VALUE)).call("loop", NDArray.scalar(0));
            } catch (Throwable e) {
                thrown.set(e);
                flag.set(Thread.currentThread().isInterrupted());
            }
        });
        t.start();
        Thread.sleep(300);
        assertTrue(t.isAlive(), "the loop should still be running");
        t.interrupt();
        t.join(5_000);
        assertFalse(t.isAlive(), "still running 5 s after the interrupt");
        InterpreterException e = (InterpreterException) thrown.get();
        assertEquals(Budget.INTERRUPTED, e.budget());
        assertTrue(flag.get(), "the interrupt flag is kept for the caller");
    }

    @Test
    void realProgramsStayWellInsideTheDefaults() {
        // Non-tail recursion 10,000 deep (DeepProgramTest) and a 100,000-iteration tail loop.
        String program = """
                def @sum(%n: int32) -> int32 { if (%n == 0) { 0 } else { %n + @sum(%n - 1) } }
                def @count(%n: int32, %acc: int32) -> int32 { if (%n == 0) { %acc } else { @count(%n - 1, %acc + 1) } }
                """;
        IRModule m = RelayParser.parseModule(program, "ok.relay");
        assertEquals(50_005_000, new Interpreter(m).call("sum", NDArray.scalar(10_000)).asTensor().getLong(0));
        assertEquals(100_000, new Interpreter(m).call("count", NDArray.scalar(100_000), NDArray.scalar(0)).asTensor().getLong(0));
    }

    /** fold-constant and partial-evaluate evaluate constant subgraphs with a bounded budget. */
    @Test
    void constantFoldingOfAHugeConstantLeavesItUnfoldedQuickly() {
        String program = """
                def @main() -> float32 {
                  sum(zeros(shape=[40000, 40000], dtype="float32"))
                }
                """;
        for (String pass : new String[] {"fold-constant", "partial-evaluate"}) {
            IRModule m = RelayParser.parseModule(program, "huge.relay");
            long t0 = System.nanoTime();
            IRModule out = PassRegistry.sequential("t", java.util.List.of(pass)).run(m, new dev.relayfarm.passes.PassContext(dev.relayfarm.passes.PassOptions.level(3))).module();
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(seconds < 10, pass + " took " + seconds + " s");
            assertTrue(ExprTraversal.postOrder(out.functions().values().iterator().next()).stream().anyMatch(x -> x instanceof Call c && c.callee().toString().contains("zeros")),
                    pass + " folded the huge constant: " + dev.relayfarm.text.RelayPrinter.print(out));
        }
        IRModule m = RelayParser.parseModule(program, "huge.relay");
        long t0 = System.nanoTime();
        OptPipeline.optimize(m, 3);
        assertTrue((System.nanoTime() - t0) / 1e9 < 20, "-O3 on a huge constant");
    }
}
