package dev.relayfarm.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.text.RelayParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example models of {@code examples/} trained on a seeded synthetic classification set: natively (the gradient
 * program partially evaluated, -O3, compiled) the loss falls below a stated threshold within a stated number of steps,
 * and the interpreter, running the gradient program as the pass wrote it, gives the same loss at every step.
 */
class TrainingTest {
    @TempDir
    Path tmp;

    record Run(double[] compiled, double[] interpreted) {}

    Run trainBoth(String example, int samples, int steps, String optimizer, double lr) throws IOException {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule model = RelayParser.parseModule(Files.readString(Path.of("../examples/" + example)), example);
        Training.Plan plan = Training.plan(model, Set.of("x", "y"));
        Map<String, NDArray> data = SyntheticData.classification("x", (TensorType) plan.data().get(0).annotation(), "y",
                (TensorType) plan.data().get(1).annotation(), samples, 42);
        Map<String, NDArray> init = Training.initialParams(plan, 7);
        double[] compiled, interpreted;
        try (GradientStep step = GradientStep.compiled(Training.compile(plan, tmp.resolve("grad"), 1))) {
            compiled = Training.train(plan, step, data, copy(init), Optimizer.named(optimizer, lr), steps, 3, null);
        }
        try (GradientStep step = GradientStep.interpreted(plan.gradient())) {
            interpreted = Training.train(plan, step, data, copy(init), Optimizer.named(optimizer, lr), steps, 3, null);
        }
        return new Run(compiled, interpreted);
    }

    static void assertSameLosses(Run r) {
        for (int i = 0; i < r.compiled().length; i++) {
            double want = r.interpreted()[i], got = r.compiled()[i];
            assertEquals(want, got, 1e-5 * Math.max(1, Math.abs(want)), "step " + (i + 1) + ": interpreter " + want + ", compiled " + got
                    + "\ncompiled:    " + Arrays.toString(r.compiled()) + "\ninterpreted: " + Arrays.toString(r.interpreted()));
        }
    }

    static double tail(double[] losses, int n) {
        return Arrays.stream(losses, losses.length - n, losses.length).average().orElseThrow();
    }

    @Test
    void mlpLearnsTheSyntheticClassesCompiledAndInterpreted() throws IOException {
        Run r = trainBoth("train_mlp.relay", 256, 60, "adam", 0.01);
        assertSameLosses(r);
        assertTrue(r.compiled()[0] > 1.0, "the first loss is near ln 4 = 1.39: " + r.compiled()[0]);
        assertTrue(tail(r.compiled(), 10) < 0.1, "mean loss of the last 10 of 60 steps " + tail(r.compiled(), 10));
    }

    @Test
    void lenetLearnsTheSyntheticClassesCompiledAndInterpreted() throws IOException {
        Run r = trainBoth("train_lenet.relay", 128, 100, "adam", 0.01);
        assertSameLosses(r);
        assertTrue(r.compiled()[0] > 1.0, "the first loss is near ln 4 = 1.39: " + r.compiled()[0]);
        assertTrue(tail(r.compiled(), 10) < 0.1, "mean loss of the last 10 of 100 steps " + tail(r.compiled(), 10));
    }

    @Test
    void normalizationScalesStartAtOneBiasesAtZeroWeightsGlorot() {
        IRModule model = RelayParser.parseModule("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(4, 6), float32], %w: Tensor[(6, 6), float32], %gamma: Tensor[(6), float32], %beta: Tensor[(6), float32]) -> float32 {
                  sum(nn.layer_norm(nn.dense(%x, %w), %gamma, %beta))
                }
                """, "ln");
        Map<String, NDArray> init = Training.initialParams(Training.plan(model, Set.of("x")), 1);
        for (int i = 0; i < 6; i++) {
            assertEquals(1.0, init.get("gamma").getDouble(i));
            assertEquals(0.0, init.get("beta").getDouble(i));
        }
        double limit = Math.sqrt(6.0 / 12), max = 0;
        for (int i = 0; i < 36; i++) max = Math.max(max, Math.abs(init.get("w").getDouble(i)));
        assertTrue(max > 0 && max <= limit, "Glorot-uniform within ±" + limit + ": " + max);
    }

    static Map<String, NDArray> copy(Map<String, NDArray> params) {
        Map<String, NDArray> out = new LinkedHashMap<>();
        params.forEach((k, v) -> out.put(k, v.copy()));
        return out;
    }
}
