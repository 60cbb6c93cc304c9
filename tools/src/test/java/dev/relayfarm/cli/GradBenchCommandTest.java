package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relayc grad --bench}: the table's shape on the LeNet loss, not its timings (the machine may be loaded). */
class GradBenchCommandTest {
    private static Path lenet() {
        // tests run in tools/; the example lives at the repository root
        Path p = Path.of("..", "examples", "train_lenet.relay");
        assumeTrue(Files.isRegularFile(p), p + " not found: skipped");
        return p;
    }

    @Test
    void benchPrintsForwardAndGradientRowsWithTheirRatio() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CliRun r = CliRun.relayc("grad", lenet().toString(), "--bench", "--runs", "3", "--warmup", "1", "--wrt", "c1,cb1,c2,cb2,w,b");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().strip().split("\n");
        assertEquals(4, lines.length, r.out());
        assertTrue(lines[0].matches("program\\s+kernels\\s+median ms\\s+p90 ms\\s+ratio"), lines[0]);
        String number = "\\d+\\.\\d{3}";
        assertTrue(lines[1].matches("forward\\s+\\d+\\s+" + number + "\\s+" + number + "\\s+1\\.00x"), lines[1]);
        assertTrue(lines[2].matches("gradient\\s+\\d+\\s+" + number + "\\s+" + number + "\\s+\\d+\\.\\d{2}x"), lines[2]);
        double fwd = Double.parseDouble(lines[1].trim().split("\\s+")[2]), grad = Double.parseDouble(lines[2].trim().split("\\s+")[2]);
        double ratio = Double.parseDouble(lines[2].trim().split("\\s+")[4].replace("x", ""));
        assertEquals(grad / fwd, ratio, 0.01 + 0.01 * ratio, "the ratio is of the medians as printed");
        assertTrue(lines[3].contains("gradient wrt c1,cb1,c2,cb2,w,b, 1 thread(s), median of 3 alternating runs each after 1 warm-up"), lines[3]);
    }

    /** --kernels adds one row per fused gradient kernel (a small model: each kernel is a C compile), shares summing to 100%. */
    @Test
    void kernelsListsEachGradientKernelWithItsShare(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Path model = tmp.resolve("dense.relay");
        Files.writeString(model, """
                def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) -> float32 {
                  sum(nn.relu(nn.dense(%x, %w)))
                }
                """);
        CliRun r = CliRun.relayc("grad", model.toString(), "--bench", "--kernels", "--runs", "3", "--warmup", "1", "--wrt", "w");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().strip().split("\n");
        int gradientKernels = Integer.parseInt(lines[2].trim().split("\\s+")[1]);
        assertTrue(lines[4].startsWith("gradient kernel (alone)"), r.out());
        assertEquals(5 + gradientKernels, lines.length, "one row per kernel of the gradient program:\n" + r.out());
        double shares = 0;
        for (int i = 5; i < lines.length; i++) {
            assertTrue(lines[i].matches("fused_\\S+\\s+\\d+\\.\\d{4}\\s+\\d+\\.\\d%\\s+\\S+"), lines[i]);
            shares += Double.parseDouble(lines[i].trim().split("\\s+")[2].replace("%", ""));
        }
        assertEquals(100, shares, 0.1 * gradientKernels + 0.1, r.out());
    }

    @Test
    void benchRefusesCheckAndBadCounts() {
        CliRun both = CliRun.relayc("grad", lenet().toString(), "--bench", "--check");
        assertTrue(both.exitCode() != 0, "a user error");
        assertTrue(both.err().contains("drop --check"), both.err());
        CliRun runs = CliRun.relayc("grad", lenet().toString(), "--bench", "--runs", "0");
        assertTrue(runs.exitCode() != 0, "a user error");
        assertTrue(runs.err().contains("at least 1"), runs.err());
    }
}
