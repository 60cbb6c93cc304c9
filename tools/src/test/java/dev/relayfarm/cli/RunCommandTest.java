package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCommandTest {
    private static final String PROGRAM = """
            def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(2, 3), float32]) {
              %0 = nn.dense(%x, %w);
              (nn.relu(%0), %0 * 2f)
            }
            """;

    private static Path setUp(Path dir) throws IOException {
        Path file = dir.resolve("model.relay");
        Files.writeString(file, PROGRAM);
        Npy.write(dir.resolve("x.npy"), NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 3}, new double[] {1, 2, 3}));
        Npy.write(dir.resolve("w.npy"), NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {1, 0, 0, -1, -1, 0.5}));
        return file;
    }

    @Test
    void runsMainPrintsOutputsAndWritesNpyFiles(@TempDir Path dir) throws IOException {
        Path file = setUp(dir);
        Path out = dir.resolve("out");
        CliRun r = CliRun.relayc("run", file.toString(), "--arg", "x=" + dir.resolve("x.npy"), "--arg", "w=" + dir.resolve("w.npy"), "--out", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        // dense: [1, -1 - 2 + 1.5] = [1, -1.5]
        assertTrue(r.out().contains("output_0: Tensor[(1, 2), float32] = [1.0, 0.0]"), r.out());
        assertTrue(r.out().contains("output_1: Tensor[(1, 2), float32] = [2.0, -3.0]"), r.out());
        NDArray o1 = Npy.read(out.resolve("output_1.npy"));
        assertArrayEquals(new float[] {2, -3}, o1.floatData());
        assertArrayEquals(new int[] {1, 2}, o1.shape());
        assertTrue(Files.exists(out.resolve("output_0.npy")));
    }

    @Test
    void missingArgumentNamesTheParameterAndItsType(@TempDir Path dir) throws IOException {
        Path file = setUp(dir);
        CliRun r = CliRun.relayc("run", file.toString(), "--arg", "w=" + dir.resolve("w.npy"));
        assertEquals(1, r.exitCode());
        assertEquals("relayc run: @main needs --arg x=FILE.npy (Tensor[(1, 3), float32]); or --random", r.err().strip());
    }

    @Test
    void unknownArgumentAndWrongShapeAreUserErrors(@TempDir Path dir) throws IOException {
        Path file = setUp(dir);
        CliRun unknown = CliRun.relayc("run", file.toString(), "--arg", "y=" + dir.resolve("x.npy"));
        assertEquals(1, unknown.exitCode());
        assertEquals("relayc run: @main has no parameter %y (its parameters: [%x, %w])", unknown.err().strip());
        CliRun shape = CliRun.relayc("run", file.toString(), "--arg", "x=" + dir.resolve("w.npy"), "--arg", "w=" + dir.resolve("w.npy"));
        assertEquals(1, shape.exitCode());
        assertTrue(shape.err().strip().endsWith("@main parameter %x expects Tensor[(1, 3), float32], got Tensor[(2, 3), float32]"), shape.err());
    }

    @Test
    void parseErrorsAreReportedWithTheirPosition(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bad.relay");
        Files.writeString(file, "def @main() {\n  %nope\n}\n");
        CliRun r = CliRun.relayc("run", file.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().startsWith("relayc run: " + file + ":2:"), r.err());
    }

    @Test
    void typeErrorsStopTheRunBeforeEvaluation(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("ill_typed.relay");
        Files.writeString(file, "def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) {\n  add(%x, %y)\n}\n");
        Npy.write(dir.resolve("x.npy"), NDArray.zeros(DType.FLOAT32, 2));
        Npy.write(dir.resolve("y.npy"), NDArray.zeros(DType.FLOAT32, 3));
        CliRun r = CliRun.relayc("run", file.toString(), "--arg", "x=" + dir.resolve("x.npy"), "--arg", "y=" + dir.resolve("y.npy"));
        assertEquals(1, r.exitCode());
        assertTrue(r.err().startsWith("relayc run: " + file + ":2:"), r.err());
        assertTrue(r.out().isEmpty(), r.out());
    }
}
