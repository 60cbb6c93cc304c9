package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compiler probe. A farm's codegen service stopped mid-job interrupts its thread; if that happened while the
 * probe waited for {@code cc --version}, the probe answered "no compiler" and {@link CCompiler#host()} kept that
 * answer for the JVM's life: every later codegen in the process failed with "no C compiler found".
 */
class CCompilerProbeTest {
    @TempDir
    Path dir;

    /** A compiler stand-in that prints its version, closes its output, and takes a moment to exit. */
    private Path slowCompiler() throws Exception {
        Path cc = dir.resolve("slowcc");
        Files.writeString(cc, "#!/bin/sh\necho 'slowcc 1.0'\nexec >&- 2>&-\nsleep 1\n");
        Files.setPosixFilePermissions(cc, PosixFilePermissions.fromString("rwxr-xr-x"));
        return cc;
    }

    @Test
    void aCompletedProbeReadsTheVersion() throws Exception {
        assertEquals(Optional.of("slowcc 1.0"), CCompiler.version(slowCompiler().toString()));
        assertEquals(Optional.empty(), CCompiler.version(dir.resolve("not-installed").toString()));
    }

    @Test
    void anInterruptedProbeThrowsInsteadOfAnsweringNoCompiler() throws Exception {
        String cc = slowCompiler().toString();
        Thread.currentThread().interrupt();
        try {
            CompileException e = assertThrows(CompileException.class, () -> CCompiler.version(cc));
            assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt stays visible to the caller");
        } finally {
            Thread.interrupted();
        }
    }
}
