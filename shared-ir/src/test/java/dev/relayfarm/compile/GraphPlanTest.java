package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.text.RelayParser;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The graph plan and the memory plan of optimized modules, without compiling kernels. */
class GraphPlanTest {
    static IRModule optimized(String text) {
        return OptPipeline.optimize(RelayParser.parseModule("#[version = \"0.0.5\"]\n" + text, "test"), 3);
    }

    /** {@code n} element-wise ops in a chain, each kept a kernel of its own by a reshape in between. */
    static String chain(int n) {
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(16, 64), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < n; i++) {
            sb.append("  %").append(i).append(" = nn.softmax(").append(prev).append(");\n");
            prev = "%" + i;
        }
        sb.append("  exp(").append(prev).append(")\n}\n");
        return sb.toString();
    }

    @Test
    void chainReusesTwoBuffers() {
        GraphPlan g = GraphBuilder.build(optimized(chain(10)));
        assertEquals(1, g.inputs().size());
        assertEquals(List.of(16, 64), g.inputs().getFirst().shape());
        assertTrue(g.steps().size() >= 10, "steps " + g.steps().size());
        assertEquals(g.steps().size() - 1, g.temps().size(), "the last kernel writes the output buffer itself");
        MemoryPlan m = MemoryPlanner.plan(g);
        // A chain needs two buffers (the producer's input and its output), whatever its length.
        assertEquals(2, m.blockSizes().size(), m.toString());
        assertEquals(2L * 16 * 64 * 4, m.arenaBytes());
        assertTrue(m.arenaBytes() < g.tempBytes(), m.arenaBytes() + " vs " + g.tempBytes());
        assertLivenessRespected(g, m);
    }

    @Test
    void structurallyEqualKernelsAreShared() {
        GraphPlan g = GraphBuilder.build(optimized(chain(5)));
        Set<Integer> kernels = new HashSet<>();
        for (Step s : g.steps()) if (s instanceof Step.KernelCall k) kernels.add(k.kernel());
        assertTrue(g.kernels().size() < g.steps().size(), "kernels " + g.kernels().size() + " for " + g.steps().size() + " calls");
        assertEquals(kernels.size(), g.kernels().size());
        assertTrue(g.kernels().getFirst().name().startsWith("fused_nn_softmax"), g.kernels().getFirst().name());
    }

    @Test
    void reshapeOnlyGroupsAliasTheirArgumentInsteadOfRunningAKernel() {
        // softmax -> reshape -> softmax: the reshape stays a group of its own between two reductions.
        GraphPlan g = GraphBuilder.build(optimized("""
                def @main(%x: Tensor[(8, 32), float32]) {
                  %0 = nn.softmax(%x);
                  %1 = reshape(%0, newshape=[16, 16]);
                  %2 = nn.softmax(%1);
                  (%2, reshape(%x, newshape=[256]))
                }
                """));
        List<Step.KernelCall> calls = g.steps().stream().filter(s -> s instanceof Step.KernelCall).map(s -> (Step.KernelCall) s).toList();
        assertEquals(2, calls.size(), "two softmax kernels, no reshape kernel: " + g.kernels());
        assertTrue(g.kernels().stream().noneMatch(k -> k.name().contains("reshape")), g.kernels().toString());
        // The second softmax reads the first one's buffer as 16x16; the reshaped input is copied to its output.
        assertEquals(calls.get(0).results().getFirst(), calls.get(1).args().getFirst());
        assertEquals(new Step.Copy(new Slot.Input(0), new Slot.Output(1), 256 * 4), g.steps().getLast());
        assertLivenessRespected(g, MemoryPlanner.plan(g));
        assertEquals(1, GraphBuilder.sameBytesParam((dev.relayfarm.ir.Function) RelayParser.parseExpr(
                "fn (%a: Tensor[(4, 4), float32], %p: Tensor[(4, 4), float32]) { squeeze(expand_dims(%p, axis=0), axis=[0]) }")));
        assertEquals(-1, GraphBuilder.sameBytesParam((dev.relayfarm.ir.Function) RelayParser.parseExpr(
                "fn (%p: Tensor[(4, 4), float32]) { transpose(reshape(%p, newshape=[16]), axes=[0]) }")), "a transpose moves bytes");
    }

    @Test
    void diamondKeepsTheSharedValueAliveUntilItsLastReader() {
        GraphPlan g = GraphBuilder.build(optimized("""
                def @main(%x: Tensor[(8, 32), float32]) {
                  %0 = nn.softmax(%x);
                  %1 = nn.softmax(%0);
                  %2 = nn.softmax(%1);
                  %3 = nn.softmax(%0);
                  add(%2, %3)
                }
                """));
        MemoryPlan m = MemoryPlanner.plan(g);
        assertLivenessRespected(g, m);
        assertTrue(g.temps().size() >= 3 && m.blockSizes().size() < g.temps().size(), "blocks " + m.blockSizes() + " for " + g.temps().size() + " temps");
    }

    @Test
    void constantsBecomeParamsAndOutputsThatNoKernelWritesAreCopied() {
        GraphPlan g = GraphBuilder.build(optimized("""
                def @main(%x: Tensor[(4, 4), float32]) {
                  %0 = add(%x, meta[relay.Constant][0]);
                  (%0, %x, %0)
                }
                #[metadata]
                {"relay.Constant": [{"dtype": "float32", "shape": [4], "data": "AACAPwAAAEAAAEBAAACAQA=="}]}
                """));
        assertEquals(1, g.params().size());
        assertEquals(List.of(4), g.paramSpecs().getFirst().shape());
        assertEquals(3, g.outputs().size());
        assertEquals(0, g.temps().size(), "the add writes output 0 directly");
        List<Step.Copy> copies = g.steps().stream().filter(s -> s instanceof Step.Copy).map(s -> (Step.Copy) s).toList();
        assertEquals(List.of(new Step.Copy(new Slot.Input(0), new Slot.Output(1), 64), new Step.Copy(new Slot.Output(0), new Slot.Output(2), 64)), copies);
    }

    @Test
    void tupleResultsOfAKernelAreFlattened() {
        GraphPlan g = GraphBuilder.build(optimized("""
                def @main(%x: Tensor[(6, 4), float32]) {
                  %0 = split(%x, indices_or_sections=2);
                  %1 = %0.1;
                  %2 = %0.0;
                  (%1, %2)
                }
                """));
        assertEquals(2, g.outputs().size());
        assertEquals(List.of(3, 4), g.outputs().get(0).shape());
    }

    @Test
    void unfusedOperatorsAndControlFlowAreRejectedWithTheNodeNamed() {
        IRModule raw = RelayParser.parseModule("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(4), float32]) { exp(%x) }", "t");
        GraphException e = assertThrows(GraphException.class, () -> GraphBuilder.build(raw));
        assertTrue(e.getMessage().contains("operator exp is called outside a fused Primitive function"), e.getMessage());
        // (a softmax branch is too costly for if-conversion to run speculatively, so the if stays)
        IRModule cf = optimized("def @main(%c: bool, %x: Tensor[(4), float32]) { if (%c) { nn.softmax(%x) } else { %x } }");
        GraphException e2 = assertThrows(GraphException.class, () -> GraphBuilder.build(cf));
        assertTrue(e2.getMessage().contains("found If"), e2.getMessage());
        IRModule dyn = optimized("def @main(%x: Tensor[(?, 4), float32]) { exp(%x) }");
        GraphException e3 = assertThrows(GraphException.class, () -> GraphBuilder.build(dyn));
        assertTrue(e3.getMessage().contains("input %x of @main has a dynamic shape"), e3.getMessage());
    }

    @Test
    void longChainPlansWithoutRecursion() {
        int n = 20_000;
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(4), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < n; i++) {
            sb.append("  %").append(i).append(" = fn (%p: Tensor[(4), float32], Primitive=1) { exp(%p) };\n");
            sb.append("  %c").append(i).append(" = %").append(i).append("(").append(prev).append(");\n");
            prev = "%c" + i;
        }
        sb.append("  ").append(prev).append("\n}\n");
        IRModule m = RelayParser.parseModule("#[version = \"0.0.5\"]\n" + sb, "long");
        GraphPlan g = GraphBuilder.build(m);
        assertEquals(n, g.steps().size());
        assertEquals(1, g.kernels().size());
        assertEquals(2, MemoryPlanner.plan(g).blockSizes().size());
    }

    /** No two temps that are live at the same time overlap in the arena, and every offset is aligned. */
    static void assertLivenessRespected(GraphPlan g, MemoryPlan m) {
        int n = g.temps().size();
        int[] def = new int[n];
        int[] last = new int[n];
        for (int s = 0; s < g.steps().size(); s++) {
            if (g.steps().get(s) instanceof Step.KernelCall k) {
                for (Slot r : k.results()) if (r instanceof Slot.Temp(int id)) { def[id] = s; last[id] = Math.max(last[id], s); }
                for (Slot a : k.args()) if (a instanceof Slot.Temp(int id)) last[id] = Math.max(last[id], s);
            } else if (g.steps().get(s) instanceof Step.Copy c && c.src() instanceof Slot.Temp(int id)) {
                last[id] = Math.max(last[id], s);
            }
        }
        for (int a = 0; a < n; a++) {
            assertEquals(0, m.offsets().get(a) % MemoryPlan.ALIGN);
            assertTrue(m.offsets().get(a) + g.temps().get(a).byteSize() <= m.arenaBytes());
            for (int b = a + 1; b < n; b++) {
                boolean overlapInTime = def[a] <= last[b] && def[b] <= last[a];
                long a0 = m.offsets().get(a), a1 = a0 + g.temps().get(a).byteSize();
                long b0 = m.offsets().get(b), b1 = b0 + g.temps().get(b).byteSize();
                boolean overlapInSpace = a0 < b1 && b0 < a1;
                assertFalse(overlapInTime && overlapInSpace, "temps " + a + " and " + b + " are live together and overlap");
            }
        }
    }
}
