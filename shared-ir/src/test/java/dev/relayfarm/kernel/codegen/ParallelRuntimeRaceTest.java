package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.process.ChildProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pool's hand-over between two jobs: a job of few chunks followed at once by one of many (kernels back to back, as
 * the VM's batches run them) must run every chunk of each exactly once, and a job must not return while one of its
 * chunks still runs. A worker that had read the finished job's state could otherwise claim a chunk of the next one
 * while its fields were being published, running it twice and counting it twice. The program checks both after every
 * job, on two threads, a hundred thousand times.
 */
class ParallelRuntimeRaceTest {
    static String program(int rounds) {
        return """
                #define _POSIX_C_SOURCE 200112L
                #include <stdint.h>
                #include <stdlib.h>
                #include <stdio.h>
                """ + ParallelRuntime.SOURCE + """
                static int64_t counts[1024];
                static void task(void* ctx, int64_t begin, int64_t end) {
                    (void) ctx;
                    for (int64_t i = begin; i < end; i++) __atomic_add_fetch(&counts[i], 1, __ATOMIC_RELAXED);
                }
                int main(void) {
                    rf_set_num_threads(2);
                    for (int64_t round = 1; round <= %d; round++) {
                        rf_parallel_for(task, NULL, 3);
                        rf_parallel_for(task, NULL, 1000);
                        for (int i = 0; i < 1000; i++) {
                            int64_t want = i < 3 ? 2 * round : round;
                            int64_t got = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
                            if (got != want) { printf("round %%lld: element %%d ran %%lld times, expected %%lld\\n", (long long) round, i, (long long) got, (long long) want); return 1; }
                        }
                    }
                    printf("ok\\n");
                    return 0;
                }
                """.formatted(rounds);
    }

    @Test
    void everyChunkOfBackToBackJobsRunsOnceAndBeforeItsJobReturns() throws Exception {
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler");
        Path exe = cc.compileExecutable(program(100_000));
        ChildProcess.Result r = ChildProcess.run(List.of(exe.toString()), ChildProcess.Options.DEFAULT.withTimeout(Duration.ofSeconds(120)));
        assertTrue(r.output().contains("ok"), r.log());
        assertEquals(0, r.exitCode(), r.log());
    }
}
