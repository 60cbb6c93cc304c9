package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link HugePages#C} compiled and run: where buffers land, and that the kernel gives them huge pages where it can. */
class HugePagesTest {
    private static final String PROGRAM = """
            #define _POSIX_C_SOURCE 200112L
            #include <stdint.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            """ + HugePages.C + """
            static long huge_kb(void) { /* AnonHugePages of this process, in KiB */
                FILE* f = fopen("/proc/self/smaps_rollup", "r");
                char line[256];
                long kb = -1;
                if (!f) return -1;
                while (fgets(line, sizeof line, f)) if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
                fclose(f);
                return kb;
            }
            int main(void) {
                char* small = rf_pages_alloc(1000);
                char* mid = rf_pages_alloc(64 << 10);
                size_t big_bytes = (size_t) 9 << 20;
                char* big = rf_pages_alloc(big_bytes);
                if (!small || !mid || !big) return 1;
                memset(big, 1, big_bytes);
                printf("%lu %lu %lu %ld\\n", (unsigned long) ((uintptr_t) small % 64), (unsigned long) ((uintptr_t) mid % (2u << 20)),
                       (unsigned long) ((uintptr_t) big % (2u << 20)), huge_kb());
                free(small); free(mid); free(big);
                return 0;
            }
            """;

    @Test
    void bigBuffersSitOnHugePageBoundariesAndGetHugePagesWhereTheKernelAllowsThem() throws IOException, InterruptedException {
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler");
        Path exe = cc.compileExecutable(PROGRAM);
        Process p = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        String[] f = out.split(" ");
        assertEquals("0", f[0], "a small buffer keeps the kernel ABI's 64-byte alignment: " + out);
        assertEquals("0", f[1], "64 KiB is on a 2 MiB boundary: " + out);
        assertEquals("0", f[2], "9 MiB is on a 2 MiB boundary: " + out);
        // the advice is honoured where transparent huge pages are "always" or "madvise" (this machine, CI's): of the 10
        // MiB written, some is backed by huge pages (all five, unless memory is too fragmented to compact)
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        assumeTrue(Files.isReadable(thp) && !Files.readString(thp).contains("[never]"), "transparent huge pages are off here");
        assertTrue(Long.parseLong(f[3]) >= 2048, "AnonHugePages after writing 9 MiB: " + f[3] + " KiB");
    }
}
