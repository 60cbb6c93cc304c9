package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Npy;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrainCommandTest {
    private static Path example(String name) {
        Path p = Path.of("..", "examples", name);
        return Files.exists(p) ? p : Path.of("examples", name);
    }

    @Test
    void trainsTheMlpExampleWithTheInterpreterAndWritesTheParameters(@TempDir Path dir) throws Exception {
        CliRun r = CliRun.relayc("train", example("train_mlp.relay").toString(), "--synthetic", "64", "--steps", "20", "--backend", "interp",
                "--print-every", "5", "--out", dir.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("4 parameters (w1, b1, w2, b2), adam lr 0.01, 20 steps"), r.out());
        assertTrue(r.out().contains("step 5 loss ") && r.out().contains("step 20 loss "), r.out());
        String[] losses = Files.readString(dir.resolve("losses.txt")).strip().split("\n");
        assertEquals(20, losses.length);
        assertTrue(Double.parseDouble(losses[19]) < Double.parseDouble(losses[0]) / 2, "the loss halves in 20 steps: " + String.join(", ", losses));
        assertEquals(32 * 20, Npy.read(dir.resolve("w1.npy")).elementCount());
    }

    @Test
    void trainsOnNpyDataAndStartsFromGivenParameters(@TempDir Path dir) throws Exception {
        var plan = dev.relayfarm.train.Training.plan(dev.relayfarm.text.RelayParser.parseModule(Files.readString(example("train_mlp.relay"))),
                java.util.Set.of("x", "y"));
        var data = dev.relayfarm.train.SyntheticData.classification("x", (dev.relayfarm.ir.TensorType) plan.data().get(0).annotation(), "y",
                (dev.relayfarm.ir.TensorType) plan.data().get(1).annotation(), 48, 5);
        Npy.write(dir.resolve("x.npy"), data.get("x"));
        Npy.write(dir.resolve("y.npy"), data.get("y"));
        // every weight zero: the first loss is exactly ln 4 whatever the data
        Npy.write(dir.resolve("w2.npy"), dev.relayfarm.ir.NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 4, 32));
        CliRun r = CliRun.relayc("train", example("train_mlp.relay").toString(), "--data", "x=" + dir.resolve("x.npy"), "--data",
                "y=" + dir.resolve("y.npy"), "--init", "w2=" + dir.resolve("w2.npy"), "--steps", "6", "--backend", "interp", "--optimizer", "sgd",
                "--lr", "0.5", "--out", dir.resolve("out").toString());
        assertEquals(0, r.exitCode(), r.err());
        String[] losses = Files.readString(dir.resolve("out").resolve("losses.txt")).strip().split("\n");
        assertEquals(Math.log(4), Double.parseDouble(losses[0]), 1e-6);
        assertTrue(Double.parseDouble(losses[5]) < Double.parseDouble(losses[0]), String.join(", ", losses));
    }

    @Test
    void dataMustMatchTheParameter(@TempDir Path dir) throws Exception {
        Path x = dir.resolve("x.npy"), y = dir.resolve("y.npy");
        Npy.write(x, dev.relayfarm.ir.NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 100, 21));
        Npy.write(y, dev.relayfarm.ir.NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 100, 4));
        CliRun r = CliRun.relayc("train", example("train_mlp.relay").toString(), "--data", "x=" + x, "--data", "y=" + y, "--backend", "interp");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("data for %x is float32[100, 21]; want float32 (N, 20) with N >= 16"), r.err());
    }

    @Test
    void badOptionsAreNamed() {
        CliRun r = CliRun.relayc("train", example("train_mlp.relay").toString(), "--synthetic", "64", "--optimizer", "rmsprop");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("unknown optimizer 'rmsprop' (sgd, momentum, adam)"), r.err());
        CliRun none = CliRun.relayc("train", example("train_mlp.relay").toString());
        assertEquals(1, none.exitCode());
        assertTrue(none.err().contains("give the data either with --data NAME=FILE.npy or with --synthetic N"), none.err());
    }
}
