package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.process.ChildProcess;
import dev.relayfarm.process.Processes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compile that runs too long, or whose caller is interrupted, ends with the compiler and everything it started
 * dead and no temporary file left in the cache. The old CCompiler read gcc's output to the end before its
 * timeout started, so the timeout never fired, an interrupt waited for gcc, and cc1 outlived a stopped farm.
 */
class CCompilerKillTest {
    @TempDir
    Path cache;
    CCompiler cc;

    @BeforeEach
    void compiler() {
        Assumptions.assumeTrue(Processes.available() && ChildProcess.isolatesGroups(), "needs /proc and setsid: skipped");
        cc = CCompiler.host().orElse(null);
        Assumptions.assumeTrue(cc != null, "no C compiler: skipped");
        cc = cc.withCache(cache);
    }

    /**
     * C that gcc -O3 needs far longer than a second for: one function of 20,000 blocks, each a call and an early
     * return (the shape of the old graph executor, which took 17 s at 8,000 steps).
     */
    static String slowSource() {
        StringBuilder c = new StringBuilder("int rf_k(void* const* a);\nint rf_big(char* A) {\n    int rc;\n");
        for (int i = 0; i < 20_000; i++) {
            c.append("    { void* a[] = { A + ").append(64 * i).append(", A + ").append(64 * i + 4096).append(" }; if ((rc = rf_k(a)) != 0) return rc * ")
                    .append(i).append(" + 1; }\n");
        }
        return c.append("    return 0;\n}\n").toString();
    }

    /** Processes whose command line mentions the cache dir: the driver, cc1 (it reads the .c there), a wrapper's children. */
    private List<Long> compilersInCache() {
        return Processes.live(p -> p.cmdline().contains(cache.toString()));
    }

    private List<Path> cacheFiles() throws Exception {
        try (Stream<Path> s = Files.list(cache)) {
            return s.toList();
        }
    }

    @Test
    void aRealGccPastTheTimeoutIsKilledWithItsChildren() throws Exception {
        long t0 = System.nanoTime();
        CompileException e = assertThrows(CompileException.class, () -> cc.withTimeout(Duration.ofSeconds(1)).compile(slowSource()));
        double s = (System.nanoTime() - t0) / 1e9;
        assertTrue(e.getMessage().startsWith("C compiler timed out after 1 s"), e.getMessage());
        assertTrue(e.getMessage().contains("relayfarm.limits.compile-timeout"), e.getMessage());
        assertTrue(s < 6, "gave up " + s + " s after starting (1 s limit)");
        assertTrue(Processes.within(5000, () -> compilersInCache().isEmpty()), () -> "still running: " + compilersInCache());
        assertEquals(List.of(), cacheFiles(), "no .c or .so.tmp left behind");
    }

    @Test
    void anInterruptKillsARealGccWithinASecond() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        String source = slowSource();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                cc.compile(source);
            } catch (Throwable e) {
                thrown.set(e);
                flag.set(Thread.currentThread().isInterrupted());
            }
        });
        // cc1 is working on the .c in the cache
        assertTrue(Processes.within(10_000, () -> Processes.live(p -> p.cmdline().contains("cc1") && p.cmdline().contains(cache.toString())).size() == 1),
                "cc1 started");
        long t0 = System.nanoTime();
        t.interrupt();
        t.join(5000);
        double s = (System.nanoTime() - t0) / 1e9;
        assertFalse(t.isAlive());
        assertTrue(s < 5, "returned " + s + " s after the interrupt"); // about 0.5 s (SIGTERM, then SIGKILL); 5 s for a loaded CI machine
        assertTrue(thrown.get() instanceof CompileException && thrown.get().getMessage().startsWith("interrupted while compiling"), String.valueOf(thrown.get()));
        assertTrue(flag.get(), "the interrupt stays visible to the caller");
        assertTrue(Processes.within(5000, () -> compilersInCache().isEmpty()), () -> "still running: " + compilersInCache());
        assertEquals(List.of(), cacheFiles(), "no .c or .so.tmp left behind");
    }

    @Test
    void aWrapperThatStartsLongChildrenIsKilledWithThem() throws Exception {
        // a compiler command (as withCommand allows: ccache, a watcher) that starts a child and an orphan, then waits
        Path wrapper = cache.getParent().resolve(cache.getFileName() + "-slowcc");
        Files.writeString(wrapper, "#!/bin/sh\nsleep 1000.271 & (sleep 1000.271 &)\nwait\n");
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        try {
            long t0 = System.nanoTime();
            CompileException e = assertThrows(CompileException.class,
                    () -> cc.withCommand(wrapper.toString()).withTimeout(Duration.ofMillis(800)).compile("int f(void) { return 1; }\n"));
            double s = (System.nanoTime() - t0) / 1e9;
            assertTrue(e.getMessage().startsWith("C compiler timed out after 800 ms"), e.getMessage());
            assertTrue(s < 6, "gave up after " + s + " s");
            assertTrue(Processes.within(5000, () -> Processes.live(p -> p.cmdline().startsWith("sleep 1000.271")).isEmpty()),
                    () -> "sleeps survived: " + Processes.live(p -> p.cmdline().startsWith("sleep 1000.271")));
            assertEquals(List.of(), cacheFiles());
        } finally {
            Files.deleteIfExists(wrapper);
        }
    }

    @Test
    void aRejectedSourceLeavesNoTemporaryFiles() throws Exception {
        CompileException e = assertThrows(CompileException.class, () -> cc.compile("int f( {\n"));
        assertTrue(e.getMessage().contains("error"), e.getMessage());
        assertEquals(List.of(), cacheFiles());
        // and a good one is cached as before: .so and its .c
        Path so = cc.compile("int f(void) { return 1; }\n");
        assertTrue(Files.isRegularFile(so));
        assertEquals(2, cacheFiles().size(), cacheFiles()::toString);
    }
}
