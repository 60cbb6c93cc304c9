package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.StmtPrinter;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.schedule.ScheduleException;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoweringTest {
    private static KernelDef matmul(int m, int n, int k) {
        Placeholder a = Te.placeholder("A", List.of(m, k), DType.FLOAT32);
        Placeholder b = Te.placeholder("B", List.of(k, n), DType.FLOAT32);
        IterVar r = Te.reduceAxis("rk", k);
        Compute c = Te.compute("C", List.of(m, n), ix -> Te.sum(a.at(ix.get(0), r.var()).mul(b.at(r.var(), ix.get(1))), r));
        return new KernelDef("matmul", List.of(a, b), List.of(c));
    }

    private static String lower(KernelDef def, Primitive... ps) {
        LoweredFunc f = Lowering.lower(def, Schedule.of(ps));
        return StmtPrinter.print(f.body());
    }

    @Test
    void naiveReductionHasInitBeforeTheReduceLoop() {
        assertEquals("""
                for i in [0, 4):
                  for j in [0, 8):
                    C[i, j] = 0.0f
                    for rk in [0, 16):
                      C[i, j] = (C[i, j] + (A[i, rk] * B[rk, j]))
                """, lower(matmul(4, 8, 16)));
    }

    @Test
    void splitReorderVectorizeParallel() {
        assertEquals("""
                for i in [0, 4) parallel:
                  for j_o in [0, 2):
                    for j_i in [0, 4) vectorized:
                      C[i, ((j_o * 4) + j_i)] = 0.0f
                    for rk in [0, 16):
                      for j_i in [0, 4) vectorized:
                        C[i, ((j_o * 4) + j_i)] = (C[i, ((j_o * 4) + j_i)] + (A[i, rk] * B[rk, ((j_o * 4) + j_i)]))
                """, lower(matmul(4, 8, 16), new Primitive.Split("C", "j", 4), new Primitive.Reorder("C", List.of("j_o", "rk", "j_i")),
                new Primitive.Vectorize("C", "j_i"), new Primitive.Parallel("C", "i")));
    }

    @Test
    void nonDividingSplitIsGuarded() {
        String out = lower(matmul(4, 10, 3), new Primitive.Split("C", "j", 4));
        assertTrue(out.contains("for j_o in [0, 3):"), out);
        assertTrue(out.contains("if (((j_o * 4) + j_i) < 10):"), out);
    }

    @Test
    void cacheWriteComputedAtATileAccumulatesLocally() {
        assertEquals("""
                for i_o in [0, 2):
                  for j_o in [0, 2):
                    allocate C_local[2, 4] local
                    for i in [0, 2) unrolled:
                      for j in [0, 4) vectorized:
                        C_local[i, j] = 0.0f
                    for rk in [0, 16):
                      for i in [0, 2) unrolled:
                        for j in [0, 4) vectorized:
                          C_local[i, j] = (C_local[i, j] + (A[((i_o * 2) + i), rk] * B[rk, ((j_o * 4) + j)]))
                    for i_i in [0, 2):
                      for j_i in [0, 4) vectorized:
                        C[((i_o * 2) + i_i), ((j_o * 4) + j_i)] = C_local[i_i, j_i]
                """, lower(matmul(4, 8, 16), new Primitive.CacheWrite("C"), new Primitive.Tile("C", "i", "j", 2, 4),
                new Primitive.ComputeAt("C_local", "C", "j_o"), new Primitive.Vectorize("C", "j_i"),
                new Primitive.Reorder("C_local", List.of("rk", "i", "j")), new Primitive.Unroll("C_local", "i"), new Primitive.Vectorize("C_local", "j")));
    }

    @Test
    void inlineAndFuse() {
        Placeholder x = Te.placeholder("X", List.of(4, 6), DType.FLOAT32);
        Compute t = Te.compute("T", List.of(4, 6), ix -> x.at(ix).mul(x.at(ix)));
        Compute y = Te.compute("Y", List.of(4, 6), ix -> t.at(ix).add(PrimExprsTestHelper.f32(1)));
        KernelDef def = new KernelDef("sq1", List.of(x), List.of(y));
        assertEquals("""
                for i_j_f in [0, 24) parallel:
                  Y[(i_j_f / 6), (i_j_f % 6)] = ((X[(i_j_f / 6), (i_j_f % 6)] * X[(i_j_f / 6), (i_j_f % 6)]) + 1.0f)
                """, lower(def, new Primitive.ComputeInline("T"), new Primitive.Fuse("Y", "i", "j"), new Primitive.Parallel("Y", "i_j_f")));
        // without inlining T is a global intermediate
        assertTrue(lower(def).startsWith("allocate T[4, 6] global\n"), lower(def));
    }

    @Test
    void invalidPrimitivesAreRejectedWithTheirPosition() {
        KernelDef def = matmul(4, 8, 16);
        assertMessage("schedule primitive #0 Split[stage=C, axis=q, factor=2]: stage C has no axis 'q' (leaf axes: [i, j, rk])",
                def, new Primitive.Split("C", "q", 2));
        assertMessage("unknown stage 'D'", def, new Primitive.Parallel("D", "i"));
        assertMessage("cannot vectorize axis i of stage C: it is not the innermost loop (loop order [i, j, rk])", def, new Primitive.Vectorize("C", "i"));
        assertMessage("cannot vectorize reduce axis rk", def, new Primitive.Vectorize("C", "rk"));
        assertMessage("cannot parallelize reduce axis rk", def, new Primitive.Parallel("C", "rk"));
        assertMessage("axis j of stage C was already split or fused", def, new Primitive.Split("C", "j", 2), new Primitive.Split("C", "j", 2));
        assertMessage("fuse needs adjacent axes", def, new Primitive.Fuse("C", "i", "rk"));
        assertMessage("split factor must be positive, got 0", def, new Primitive.Split("C", "i", 0));
        assertMessage("cannot inline C: it is a kernel output", def, new Primitive.ComputeInline("C"));
        assertMessage("cache_write must come before other primitives on stage C", def, new Primitive.Split("C", "i", 2), new Primitive.CacheWrite("C"));
        // vectorize, then reorder the axis outward: caught at lowering
        assertMessage("stage C: vectorized axis j_i is not the innermost loop", def, new Primitive.Split("C", "j", 4),
                new Primitive.Reorder("C", List.of("j_o", "rk", "j_i")),
                new Primitive.Vectorize("C", "j_i"), new Primitive.Reorder("C", List.of("j_i", "rk")));
    }

    private static void assertMessage(String expected, KernelDef def, Primitive... ps) {
        ScheduleException e = assertThrows(ScheduleException.class, () -> Lowering.lower(def, Schedule.of(ps)));
        assertTrue(e.getMessage().contains(expected), () -> "expected '" + expected + "' in: " + e.getMessage());
    }

    @Test
    void scheduleRoundTripsThroughJson() {
        Schedule s = Schedule.of(new Primitive.CacheWrite("C"), new Primitive.Tile("C", "i", "j", 2, 4),
                new Primitive.ComputeAt("C_local", "C", "j_o"), new Primitive.Reorder("C_local", List.of("rk", "i", "j")),
                new Primitive.Vectorize("C", "j_i"), new Primitive.Unroll("C_local", "i"), new Primitive.Parallel("C", "i_o"),
                new Primitive.Fuse("C", "i_o", "j_o"), new Primitive.ComputeInline("T"), new Primitive.Split("C", "i", 3));
        String json = s.toJson();
        assertTrue(json.contains("{\"kind\":\"tile\",\"stage\":\"C\",\"x\":\"i\",\"y\":\"j\",\"xFactor\":2,\"yFactor\":4}"), json);
        assertEquals(s, Schedule.fromJson(json));
        assertThrows(IllegalArgumentException.class, () -> Schedule.fromJson("{\"primitives\":[{\"kind\":\"spin\"}]}"));
    }
}
