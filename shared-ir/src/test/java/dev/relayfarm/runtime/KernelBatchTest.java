package dev.relayfarm.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.compute.Elementwise;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Kernel calls queued in native memory run in order, only when asked, and are checked when queued. */
class KernelBatchTest {
    private static final int N = 64;

    /** A library with one kernel, {@code y = exp(x)} on 64 floats. */
    private static KernelLibrary library() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler: nothing to run");
        Placeholder x = Te.placeholder("X", List.of(N), DType.FLOAT32);
        Compute y = Elementwise.unary("exp", x);
        return KernelLibrary.build(new CModule(List.of(Lowering.lower(new KernelDef("exp_k", List.of(x), List.of(y)), Elementwise.injectiveSchedule(y)))),
                CCompiler.host().orElseThrow());
    }

    private static MemorySegment floats(Arena arena, float value) {
        MemorySegment s = arena.allocate(4L * N, 64);
        for (int i = 0; i < N; i++) s.setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
        return s;
    }

    @Test
    void queuedCallsRunInOrderOnlyWhenRun() {
        try (KernelLibrary lib = library(); Arena arena = Arena.ofConfined(); KernelBatch batch = lib.batch(8, 64).orElseThrow()) {
            NativeKernel exp = lib.kernel("exp_k");
            // a chain a -> b -> c: the second call reads what the first writes, so order shows in the result
            MemorySegment a = floats(arena, 0.5f), b = floats(arena, -1), c = floats(arena, -1);
            assertTrue(batch.add(exp, List.of(a, b)));
            assertTrue(batch.add(exp, List.of(b, c)));
            assertEquals(2, batch.size());
            assertEquals(-1, c.getAtIndex(ValueLayout.JAVA_FLOAT, N - 1), "nothing runs before run()");
            batch.run();
            assertEquals(0, batch.size());
            assertEquals((float) Math.exp(Math.exp(0.5)), c.getAtIndex(ValueLayout.JAVA_FLOAT, N - 1), 1e-5f);
            // the queue is reusable after a run
            assertTrue(batch.add(exp, List.of(c, a)));
            batch.run();
            assertEquals((float) Math.exp(Math.exp(Math.exp(0.5))), a.getAtIndex(ValueLayout.JAVA_FLOAT, 0), 1e-3f);
        }
    }

    @Test
    void aFullQueueRefusesAndBadBuffersAreErrorsWhenQueued() {
        try (KernelLibrary lib = library(); Arena arena = Arena.ofConfined(); KernelBatch batch = lib.batch(2, 64).orElseThrow()) {
            NativeKernel exp = lib.kernel("exp_k");
            MemorySegment a = floats(arena, 1), b = floats(arena, 0);
            assertTrue(batch.add(exp, List.of(a, b)));
            assertTrue(batch.add(exp, List.of(a, b)));
            assertFalse(batch.add(exp, List.of(a, b)), "two calls fill a batch of two");
            batch.clear();
            assertEquals(0, batch.size());
            IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> batch.add(exp, List.of(a, arena.allocate(8, 64))));
            assertTrue(small.getMessage().contains("exp_k") && small.getMessage().contains("needs " + 4 * N), small.getMessage());
            assertThrows(IllegalArgumentException.class, () -> batch.add(exp, List.of(a)));
            assertEquals(0, batch.size(), "a refused call is not queued");
        }
    }
}
