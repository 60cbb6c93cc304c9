package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import org.junit.jupiter.api.Test;

/**
 * 100,000-deep let chains and dataflow chains parse, print and round-trip on the default JVM stack
 * (the parser loops over bindings; the printer loops over lets and walks operands with a stack).
 */
class DeepProgramTest {
    private static final int N = 100_000;

    @Test
    void letChain() {
        StringBuilder sb = new StringBuilder("def @main(%x: int32) -> int32 {\n  let %v0 = %x;\n");
        for (int i = 1; i < N; i++) sb.append("  let %v").append(i).append(" = %v").append(i - 1).append(" + 1;\n");
        sb.append("  %v").append(N - 1).append("\n}\n");
        IRModule m = RoundTrip.module(sb.toString(), "lets.relay", false);
        int depth = 0;
        for (Expr e = m.main().orElseThrow().body(); e instanceof Let l; e = l.body()) depth++;
        assertEquals(N, depth);
    }

    @Test
    void dataflowChain() {
        StringBuilder sb = new StringBuilder("def @main(%x: float32) -> float32 {\n  %0 = add(%x, 1f);\n");
        for (int i = 1; i < N; i++) sb.append("  %").append(i).append(" = multiply(%").append(i - 1).append(", 1.5f);\n");
        sb.append("  %").append(N - 1).append("\n}\n");
        IRModule m = RoundTrip.module(sb.toString(), "dataflow.relay", false);
        Expr body = m.main().orElseThrow().body();
        assertTrue(body instanceof Call);
        assertEquals(N, ExprTraversal.postOrder(body).stream().filter(e -> e instanceof Call).count());
    }
}
