package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.runtime.KernelLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The generated thread pool (ParallelRuntime) really runs parallel loops: outlined bodies see the
 * kernel's buffers, enclosing loop variables and intermediates; results do not depend on the thread
 * count (also above the core count), on concurrent callers of one library, or on unloading and
 * reloading the library (its destructor joins the workers).
 */
class ParallelRuntimeTest {
    private static final int ROWS = 509, COLS = 300, BATCH = 3;
    private static CModule module;

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found (set $CC or install gcc/clang/cc): parallel runtime tests skipped");
        // rows: the parallel loop is the outermost one
        Placeholder x = f32("X", ROWS, COLS), b = f32("B", ROWS);
        Compute y = Te.compute("Y", List.of(ROWS, COLS), List.of("i", "j"), ix -> x.at(ix.get(0), ix.get(1)).mul(Te.constant(DType.FLOAT32, 2.0)).add(b.at(ix.get(0))));
        var rows = Lowering.lower(new KernelDef("rows", List.of(x, b), List.of(y)), Schedule.of(new Primitive.Parallel("Y", "i")));
        // batched: a serial batch loop around the parallel row loop (the body captures the batch index)
        Placeholder bx = f32("X", BATCH, ROWS, COLS), bb = f32("B", BATCH, ROWS);
        Compute by = Te.compute("Y", List.of(BATCH, ROWS, COLS), List.of("n", "i", "j"),
                ix -> bx.at(ix.get(0), ix.get(1), ix.get(2)).mul(Te.constant(DType.FLOAT32, 2.0)).add(bb.at(ix.get(0), ix.get(1))));
        var batched = Lowering.lower(new KernelDef("batched", List.of(bx, bb), List.of(by)), Schedule.of(new Primitive.Parallel("Y", "i")));
        // staged: a heap intermediate T, written and read by two parallel loops
        Placeholder sx = f32("X", ROWS, COLS), sb = f32("B", ROWS);
        Compute t = Te.compute("T", List.of(ROWS, COLS), List.of("ti", "tj"), ix -> sx.at(ix.get(0), ix.get(1)).mul(Te.constant(DType.FLOAT32, 2.0)));
        Compute sy = Te.compute("Y", List.of(ROWS, COLS), List.of("i", "j"), ix -> t.at(ix.get(0), ix.get(1)).add(sb.at(ix.get(0))));
        var staged = Lowering.lower(new KernelDef("staged", List.of(sx, sb), List.of(sy)),
                Schedule.of(new Primitive.Parallel("T", "ti"), new Primitive.Parallel("Y", "i")));
        module = new CModule(List.of(rows, batched, staged));
    }

    private static Placeholder f32(String name, Integer... shape) {
        return Te.placeholder(name, List.of(shape), DType.FLOAT32);
    }

    @Test
    void parallelLoopsAreOutlinedOntoThePool() {
        String c = module.source();
        assertTrue(c.contains("rf_parallel_for(rf_par0_rows, &rf_c, 509)"), c);
        assertTrue(c.contains("rf_parallel_for(rf_par0_batched, &rf_c, 509)"), "the batched kernel's row loop is parallel:\n" + c);
        assertTrue(c.contains("rf_parallel_for(rf_par1_staged, &rf_c, 509)"), "both loops of the staged kernel are parallel:\n" + c);
        assertFalse(c.contains("omp parallel"), "no OpenMP runtime is used:\n" + c);
    }

    @Test
    void resultsDoNotDependOnTheThreadCount() {
        try (KernelLibrary lib = KernelLibrary.build(module, CCompiler.host().orElseThrow())) {
            for (String kernel : List.of("rows", "batched", "staged")) {
                List<NDArray> in = inputs(lib, kernel, 7);
                float[] expected = expected(kernel, in);
                for (int threads : List.of(1, 2, 3, 8, 0)) {
                    lib.setNumThreads(threads);
                    assertArrayEquals(expected, lib.kernel(kernel).run(in).getFirst().floatData(), kernel + " on " + threads + " threads");
                }
            }
        }
    }

    @Test
    void concurrentCallersOfOneLibraryGetTheirOwnResults() throws Exception {
        try (KernelLibrary lib = KernelLibrary.build(module, CCompiler.host().orElseThrow()); ExecutorService pool = Executors.newFixedThreadPool(4)) {
            lib.setNumThreads(2);
            List<Future<?>> done = new ArrayList<>();
            for (int caller = 0; caller < 4; caller++) {
                String kernel = List.of("rows", "batched", "staged").get(caller % 3);
                List<NDArray> in = inputs(lib, kernel, 100 + caller);
                float[] expected = expected(kernel, in);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 25; i++) assertArrayEquals(expected, lib.kernel(kernel).run(in).getFirst().floatData(), kernel + " run " + i);
                }));
            }
            for (Future<?> f : done) f.get();
        }
    }

    @Test
    void aLibraryCanBeUnloadedAndLoadedAgainAfterItsWorkersRan() {
        for (int round = 0; round < 3; round++) {
            try (KernelLibrary lib = KernelLibrary.build(module, CCompiler.host().orElseThrow())) {
                lib.setNumThreads(4);
                List<NDArray> in = inputs(lib, "rows", round);
                assertArrayEquals(expected("rows", in), lib.kernel("rows").run(in).getFirst().floatData(), "round " + round);
            }
        }
    }

    private static List<NDArray> inputs(KernelLibrary lib, String kernel, long seed) {
        Random rnd = new Random(seed);
        List<NDArray> in = new ArrayList<>();
        for (var p : lib.kernel(kernel).signature().inputs()) {
            int n = p.shape().stream().reduce(1, (a, c) -> a * c);
            float[] v = new float[n];
            for (int i = 0; i < n; i++) v[i] = rnd.nextFloat() * 2 - 1;
            in.add(NDArray.wrap(DType.FLOAT32, p.shape().stream().mapToInt(Integer::intValue).toArray(), v));
        }
        return in;
    }

    /** {@code Y = 2 X + B} broadcast over the last axis, computed in Java. */
    private static float[] expected(String kernel, List<NDArray> in) {
        float[] x = in.get(0).floatData(), b = in.get(1).floatData(), y = new float[x.length];
        for (int i = 0; i < x.length; i++) y[i] = x[i] * 2f + b[i / COLS];
        return y;
    }
}
