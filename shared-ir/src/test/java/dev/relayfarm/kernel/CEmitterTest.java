package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.codegen.CEmitter;
import dev.relayfarm.kernel.compute.Dense;
import dev.relayfarm.kernel.compute.Elementwise;
import dev.relayfarm.kernel.compute.Reductions;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CHECK-style tests of the emitted C (no compiler needed). */
class CEmitterTest {
    private static String emit(KernelDef def, Schedule s) {
        return CEmitter.emit(List.of(Lowering.lower(def, s)));
    }

    @Test
    void denseDefaultScheduleHasPackingParallelTilesAndALocalAccumulator() {
        Placeholder a = Te.placeholder("A", List.of(8, 32), DType.FLOAT32), w = Te.placeholder("W", List.of(4096, 32), DType.FLOAT32);
        Dense.Def d = Dense.compute(a, w);
        String c = emit(new KernelDef("dense_k", List.of(a, w), List.of(d.out())), Dense.defaultSchedule(d));
        CCheck.assertMatches("""
                CHECK: typedef struct { const float* [[A:\\w+]]; const float* [[W:\\w+]]; float* [[OUT:\\w+]]; float* [[P:weight_packed\\w*]]; } rf_par0_dense_k_ctx;
                CHECK-NEXT: __attribute__((noinline)) static void rf_par0_dense_k(void* rf_vctx, int64_t rf_begin, int64_t rf_end) {
                CHECK: float* restrict [[P]] = (float*)__builtin_assume_aligned(rf_c->[[P]], 64);
                CHECK: for (int64_t [[JO:\\w+]] = 0 + rf_begin; [[JO]] < 0 + rf_end; ++[[JO]]) {
                CHECK-NEXT: for (int64_t [[JI:\\w+]] = 0; [[JI]] < 16; ++[[JI]]) {
                CHECK-NEXT: for (int64_t [[PK:\\w+]] = 0; [[PK]] < 32; ++[[PK]]) {
                CHECK-NEXT: [[P]][{{.*}}] = [[W]][{{.*}}];
                CHECK: __attribute__((noinline)) static void rf_par1_dense_k(void* rf_vctx, int64_t rf_begin, int64_t rf_end) {
                CHECK: for (int64_t [[F:\\w+]] = 0 + rf_begin; [[F]] < 0 + rf_end; ++[[F]]) {
                CHECK-NEXT: {
                CHECK-NEXT: float [[LOC:dense_local\\w*]][64] __attribute__((aligned(64)));
                CHECK: = 0.0f;
                CHECK: for (int64_t [[K:\\w+]] = 0; [[K]] < 32; ++[[K]]) {
                CHECK-NEXT: #pragma GCC unroll 4
                CHECK-NEXT: for (int64_t [[I:\\w+]] = 0; [[I]] < 4; ++[[I]]) {
                CHECK-NEXT: #pragma omp simd
                CHECK-NEXT: for (int64_t [[J:\\w+]] = 0; [[J]] < 16; ++[[J]]) {
                CHECK-NEXT: [[LOC]][(([[I]] * 16) + [[J]])] = ([[LOC]][(([[I]] * 16) + [[J]])] + ([[A]][{{.*}}[[K]]{{.*}}] * [[P]][{{.*}}]));
                CHECK: #pragma omp simd
                CHECK-NEXT: for (int64_t [[JI2:\\w+]] = 0; [[JI2]] < 16; ++[[JI2]]) {
                CHECK-NEXT: [[OUT]][{{.*}}] = [[LOC]][{{.*}}];
                CHECK: int32_t dense_k(void* const* args) {
                CHECK-NEXT: const float* restrict [[A]] = (const float*)__builtin_assume_aligned(args[0], 64);
                CHECK-NEXT: const float* restrict [[W]] = (const float*)__builtin_assume_aligned(args[1], 64);
                CHECK-NEXT: float* restrict [[OUT]] = (float*)__builtin_assume_aligned(args[2], 64);
                CHECK: float* restrict [[P]] = (float*)rf_alloc(524288);
                CHECK-NEXT: if ([[P]] == NULL) return -1;
                CHECK-NEXT: { rf_par0_dense_k_ctx rf_c = { [[A]], [[W]], [[OUT]], [[P]] }; rf_parallel_for(rf_par0_dense_k, &rf_c, 256); }
                CHECK-NEXT: { rf_par1_dense_k_ctx rf_c = { [[A]], [[W]], [[OUT]], [[P]] }; rf_parallel_for(rf_par1_dense_k, &rf_c, 512); }
                CHECK-NEXT: free([[P]]);
                CHECK-NEXT: }
                CHECK-NEXT: return 0;
                """, c);
    }

    @Test
    void aParallelLoopWithLittleWorkRunsSerially() {
        Placeholder x = Te.placeholder("X", List.of(8, 64), DType.FLOAT32);
        Compute y = Elementwise.unary("sigmoid", x);
        String c = emit(new KernelDef("small", List.of(x), List.of(y)), Schedule.of(new Primitive.Parallel(y.name(), "i")));
        CCheck.assertMatches("""
                CHECK-NOT: rf_parallel_for(rf_par
                CHECK: /* serial: 512 iterations are too few to share */
                CHECK-NEXT: for (int64_t
                """, c);
    }

    @Test
    void injectiveScheduleFusesSplitsAndVectorizes() {
        Placeholder x = Te.placeholder("X", List.of(256, 512), DType.FLOAT32);
        Compute y = Elementwise.unary("sigmoid", x);
        String c = emit(new KernelDef("sig", List.of(x), List.of(y)), Elementwise.injectiveSchedule(y));
        CCheck.assertMatches("""
                CHECK: for (int64_t [[O:i_j_f_o]] = 0 + rf_begin; [[O]] < 0 + rf_end; ++[[O]]) {
                CHECK-NEXT: #pragma omp simd
                CHECK-NEXT: for (int64_t [[I:i_j_f_i]] = 0; [[I]] < 64; ++[[I]]) {
                CHECK-NEXT: sigmoid[(([[O]] * 64) + [[I]])] = (1.0f / (1.0f + expf((-X[(([[O]] * 64) + [[I]])]))));
                CHECK: rf_parallel_for(rf_par0_sig, &rf_c, 2048);
                """, c);
    }

    @Test
    void maxReductionStartsAtMinusInfinityAndClipUsesMinMax() {
        Placeholder x = Te.placeholder("X", List.of(4, 9), DType.FLOAT32);
        Compute m = Reductions.max(x, List.of(1), false);
        CCheck.assertMatches("""
                CHECK: max[i] = (-INFINITY);
                CHECK-NEXT: for (int64_t r1 = 0; r1 < 9; ++r1) {
                CHECK-NEXT: max[i] = rf_maxf(max[i], X[((i * 9) + r1)]);
                """, emit(new KernelDef("mx", List.of(x), List.of(m)), Schedule.NAIVE));
        Compute c = Elementwise.clip(x, -1, 2.5);
        CCheck.assertMatches("CHECK: clip[((i * 9) + j)] = rf_minf(rf_maxf(X[((i * 9) + j)], (-1.0f)), 2.5f);",
                emit(new KernelDef("cl", List.of(x), List.of(c)), Schedule.NAIVE));
    }

    @Test
    void distinctVariablesWithOneNameGetDistinctCNames() {
        // C_local's axes are named like C's; computed at C's own unsplit axis they nest inside it.
        Placeholder a = Te.placeholder("A", List.of(4, 8), DType.FLOAT32);
        var r = Te.reduceAxis("rk", 8);
        Compute c = Te.compute("C", List.of(4, 4), ix -> Te.sum(a.at(ix.get(0), r.var()).mul(a.at(ix.get(1), r.var())), r));
        String src = emit(new KernelDef("gram", List.of(a), List.of(c)), Schedule.of(new Primitive.CacheWrite("C"), new Primitive.ComputeAt("C_local", "C", "i")));
        CCheck.assertMatches("""
                CHECK: for (int64_t [[I:i]] = 0; [[I]] < 4; ++[[I]]) {
                CHECK: float C_local[4]
                CHECK: for (int64_t [[I2:i_1]] = 0; [[I2]] < 1; ++[[I2]]) {
                CHECK: C_local[[[J:j]]] = (C_local[[[J]]] + (A[(([[I]] * 8) + rk)] * A[(([[J]] * 8) + rk)]));
                CHECK: for (int64_t [[J2:j_1]] = 0; [[J2]] < 4; ++[[J2]]) {
                CHECK-NEXT: C[(([[I]] * 4) + [[J2]])] = C_local[[[J2]]];
                """, src);
    }

    @Test
    void checkMatcherReportsMissingLines() {
        assertThrows(AssertionError.class, () -> CCheck.assertMatches("CHECK: a\nCHECK-NEXT: c", "a\nb\nc"));
        assertThrows(AssertionError.class, () -> CCheck.assertMatches("CHECK: [[X:\\w+]] = 1\nCHECK: [[X]] = 2", "p = 1\nq = 2"));
        assertThrows(AssertionError.class, () -> CCheck.assertMatches("CHECK: a\nCHECK-NOT: b\nCHECK: c", "a\nb\nc"));
        CCheck.assertMatches("CHECK: [[X:\\w+]] = 1\nCHECK-NEXT: [[X]] = {{[0-9]+}}", "p = 1\np = 22");
        assertTrue(Var.index("v").id() > 0);
    }
}
