package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GradCommandTest {
    private static final String TANH = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(3), float64], %w: Tensor[(3), float64]) {
              sum(multiply(tanh(%x), %w))
            }
            """;

    @Test
    void printsAGradientProgramThatRuns(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.relay");
        Files.writeString(f, TANH);
        CliRun g = CliRun.relayc("grad", f.toString(), "--wrt", "w");
        assertEquals(0, g.exitCode(), g.err());
        assertTrue(g.out().contains("def @main_reverse(%bp: ref(fn () -> ())"), g.out());
        Path grad = dir.resolve("grad.relay");
        Files.writeString(grad, g.out());
        CliRun run = CliRun.relayc("run", grad.toString(), "--random");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("output_0: float64") && run.out().contains("output_1: Tensor[(3), float64]"), run.out());
    }

    @Test
    void simplifiedIsTheHandWrittenDerivative(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.relay");
        Files.writeString(f, TANH);
        CliRun g = CliRun.relayc("grad", f.toString(), "--simplify");
        assertEquals(0, g.exitCode(), g.err());
        // d/dx = w (1 - tanh(x)^2), d/dw = tanh(x): no references, closures or zero adjoints left
        assertFalse(g.out().contains("ref") || g.out().contains("fn (") || g.out().contains("zeros"), g.out());
        assertTrue(g.out().contains("subtract(1f64, %3)"), g.out());
    }

    @Test
    void checkComparesWithFiniteDifferences(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.relay");
        Files.writeString(f, TANH);
        CliRun c = CliRun.relayc("grad", f.toString(), "--check");
        assertEquals(0, c.exitCode(), c.err());
        assertTrue(c.out().contains("%x: relative error") && c.out().contains("worst relative error"), c.out());
    }

    @Test
    void anOperatorWithoutAGradientIsAUserError(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.relay");
        Files.writeString(f, "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(3, 3), float32]) {\n  det(%x)\n}\n");
        CliRun c = CliRun.relayc("grad", f.toString());
        assertEquals(1, c.exitCode());
        assertEquals("relayc grad: gradient: no gradient registered for operator det at " + f + ":3:3\n", c.err());
    }

    @Test
    void unknownWrtParameterIsNamed(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("f.relay");
        Files.writeString(f, TANH);
        CliRun c = CliRun.relayc("grad", f.toString(), "--wrt", "q");
        assertEquals(1, c.exitCode());
        assertTrue(c.err().contains("@main has no parameter %q (--wrt)"), c.err());
    }
}
