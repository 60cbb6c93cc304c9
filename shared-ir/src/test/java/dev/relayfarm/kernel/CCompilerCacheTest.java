package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The content-addressed library cache under concurrency: threads building the same source at the
 * same moment (the node suite's parallel tests often generate identical artifacts) all get a
 * complete library. A shared {@code <hash>.c} rewritten while another compiler read it once cached
 * an empty library under the source's hash.
 *
 * <p>That truncation is too brief to hit on purpose (every thread writes the same bytes before any
 * compiler has started reading), so the compiler runs through a wrapper that fails when a source
 * file it is handed is already being compiled by another build: it catches the cause, a source file
 * shared between concurrent builds, every time (a cache writing {@code <hash>.c} in place fails here),
 * and holds each build long enough for all threads to overlap.
 */
class CCompilerCacheTest {
    @TempDir
    Path cache;

    @TempDir
    Path bin;

    @Test
    void concurrentBuildsOfOneSourceAllGetACompleteLibrary() throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler real = CCompiler.host().orElseThrow();
        Path wrapper = bin.resolve("exclusive-cc");
        // The compiler's arguments end with "SOURCE.c -lm": the source is the next-to-last one.
        Files.writeString(wrapper, """
                #!/bin/sh
                eval "src=\\${$(($# - 1))}"
                mkdir "$src.in-use" 2>/dev/null || { echo "$src is already being compiled by another build" >&2; exit 3; }
                sleep 1
                "%s" "$@"
                rc=$?
                rmdir "$src.in-use"
                exit $rc
                """.formatted(real.command()));
        assumeTrue(wrapper.toFile().setExecutable(true), "cannot make a script executable here: skipped");
        CCompiler cc = real.withCache(cache).withCommand(wrapper.toString());
        StringBuilder src = new StringBuilder("#include <stdint.h>\n");
        // A probe symbol to look up in every library, after some code for the compiler to read.
        for (int i = 0; i < 200; i++) src.append("int32_t f").append(i).append("(int32_t x) { return x * ").append(i).append(" + 1; }\n");
        src.append("int32_t cache_probe(void) { return 42; }\n");
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Path>> built = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) built.add(pool.submit(() -> {
                start.await();
                return cc.compile(src.toString());
            }));
            for (Future<Path> f : built) {
                Path so = f.get();
                try (Arena arena = Arena.ofShared()) {
                    assertTrue(SymbolLookup.libraryLookup(so, arena).find("cache_probe").isPresent(), so + " lacks its symbol");
                }
            }
        } finally {
            pool.shutdownNow();
        }
        try (Stream<Path> files = Files.list(cache)) {
            List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
            assertEquals(2, names.size(), "one .c and one .so, no leftovers: " + names);
            assertTrue(names.get(0).endsWith(".c") && names.get(1).endsWith(".so"), names.toString());
            assertEquals(src.toString(), Files.readString(cache.resolve(names.get(0))));
        }
    }

    @Test
    void anExecutableIsCachedApartFromTheLibraryOfTheSameSource() throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler cc = CCompiler.host().orElseThrow().withCache(cache);
        String src = "#include <stdio.h>\nint main(void) { puts(\"built as a program\"); return 7; }\n";
        Path exe = cc.compileExecutable(src);
        Path lib = cc.compile(src);
        assertNotEquals(exe, lib);
        assertTrue(exe.getFileName().toString().endsWith(".bin") && lib.getFileName().toString().endsWith(".so"), exe + " " + lib);
        assertEquals(exe, cc.compileExecutable(src), "cached: the same path, not a second build");
        Process p = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        assertEquals("built as a program", new String(p.getInputStream().readAllBytes()).strip());
        assertEquals(7, p.waitFor());
    }
}
