package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Artifacts end to end: compile, write, load with FFM, run, compare with the interpreter or ONNX's expected outputs. */
class ArtifactTest {
    @TempDir
    static Path tmp;

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    static final String SMALL = """
            def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) {
              %0 = nn.dense(%x, %w);
              %1 = add(%0, meta[relay.Constant][0]);
              %2 = nn.relu(%1);
              %3 = exp(%2);
              (%3, %2)
            }
            #[metadata]
            {"relay.Constant": [{"dtype": "float32", "shape": [4], "data": "AACAPwAAAEAAAEBAAACAQA=="}]}
            """;

    static NDArray random(int seed, int... shape) {
        Random r = new Random(seed);
        NDArray a = NDArray.zeros(DType.FLOAT32, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, r.nextGaussian());
        return a;
    }

    @Test
    void smallModelMatchesTheInterpreterAndIsReproducible() throws Exception {
        IRModule m = GraphPlanTest.optimized(SMALL);
        Path a = tmp.resolve("a"), b = tmp.resolve("b");
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(m, CompileOptions.host(3), a);
        ArtifactCompiler.Artifact again = ArtifactCompiler.compile(m, CompileOptions.host(3), b);
        assertEquals(art.contentHash(), again.contentHash());
        for (String f : List.of("manifest.json", "params.bin", "lib.so", "src/kernels.c", "src/entry.c")) {
            assertArrayEquals(Files.readAllBytes(a.resolve(f)), Files.readAllBytes(b.resolve(f)), f + " differs between two compiles");
        }
        JsonNode manifest = new ObjectMapper().readTree(a.resolve("manifest.json").toFile());
        assertEquals("relayfarm-artifact/1", manifest.get("format").asText());
        assertEquals("x", manifest.get("inputs").get(0).get("name").asText());
        assertEquals("[2,8]", manifest.get("inputs").get(0).get("shape").toString());
        assertEquals(2, manifest.get("outputs").size());
        assertEquals(Target.host().toString(), manifest.get("target").asText());
        assertEquals(art.contentHash(), manifest.get("content_hash").asText());
        assertTrue(manifest.get("kernels").size() >= 2);
        assertTrue(manifest.get("kernels").get(0).hasNonNull("workload"));
        assertEquals(64, manifest.get("files").get("params.bin").asText().length());

        NDArray x = random(1, 2, 8), w = random(2, 4, 8);
        TupleValue want = (TupleValue) Interpreter.runMain(m, x, w);
        try (CompiledModel cm = CompiledModel.load(a)) {
            cm.setNumThreads(1);
            List<NDArray> got = cm.run(List.of(x, w));
            assertEquals(2, got.size());
            for (int i = 0; i < 2; i++) {
                NDArray e = ((TensorValue) want.fields().get(i)).data();
                for (int k = 0; k < e.elementCount(); k++) assertEquals(e.getDouble(k), got.get(i).getDouble(k), 1e-5, "output " + i + "[" + k + "]");
            }
            // Runs again on the same model handle: the arena is reused, results stay right.
            assertTrue(got.get(0).contentEquals(cm.run(List.of(x, w)).get(0)));
        }
    }

    /** Zero-element tensors (an empty input, an empty output, an empty concatenate field) compile at -O1 and run. */
    @Test
    void emptyTensorsCompileAndRun() throws Exception {
        IRModule m = dev.relayfarm.passes.OptPipeline.optimize(dev.relayfarm.text.RelayParser.parseModule("""
                #[version = "0.0.5"]
                def @main(%e: Tensor[(2, 0), float32], %x: Tensor[(2, 3), float32]) {
                  %0 = concatenate((%e, %x), axis=1);
                  %1 = add(%0, sum(%e, axis=[1], keepdims=True));
                  (%1, strided_slice(%0, begin=[3], end=[3], strides=[1], axes=[1]))
                }
                """, "empty"), 1);
        Path dir = tmp.resolve("empty");
        ArtifactCompiler.compile(m, CompileOptions.host(1), dir);
        NDArray e = NDArray.zeros(DType.FLOAT32, 2, 0), x = random(3, 2, 3);
        try (CompiledModel cm = CompiledModel.load(dir)) {
            List<NDArray> got = cm.run(List.of(e, x));
            assertTrue(got.get(0).contentEquals(x), "x plus an empty sum (0) is x");
            assertArrayEquals(new int[] {2, 0}, got.get(1).shape());
        }
    }

    @Test
    void badInputsNameTheInput() throws Exception {
        Path dir = tmp.resolve("bad");
        ArtifactCompiler.compile(GraphPlanTest.optimized(SMALL), CompileOptions.host(3), dir);
        try (CompiledModel cm = CompiledModel.load(dir)) {
            NDArray x = random(1, 2, 8);
            String count = assertThrows(IllegalArgumentException.class, () -> cm.run(List.of(x))).getMessage();
            assertTrue(count.contains("takes 2 inputs [x, w], got 1"), count);
            String shape = assertThrows(IllegalArgumentException.class, () -> cm.run(List.of(x, random(2, 4, 7)))).getMessage();
            assertTrue(shape.contains("input 1 (w) must have shape [4, 8], got [4, 7]"), shape);
            String dtype = assertThrows(IllegalArgumentException.class, () -> cm.run(List.of(NDArray.zeros(DType.FLOAT64, 2, 8), random(2, 4, 8)))).getMessage();
            assertTrue(dtype.contains("input 0 (x) must be float32, got float64"), dtype);
        }
        Files.write(dir.resolve("params.bin"), new byte[] {1, 2, 3});
        String broken = assertThrows(ArtifactException.class, () -> CompiledModel.load(dir)).getMessage();
        assertTrue(broken.contains("params.bin is not a RelayFarm params file"), broken);
    }

    @Test
    void crossTargetWithoutCompilerEmitsSourcesOnly() throws Exception {
        Target arm = Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
        assumeTrue(CCompiler.forTarget(arm).isEmpty(), "an aarch64 cross compiler is installed");
        Path dir = tmp.resolve("arm");
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(GraphPlanTest.optimized(SMALL), new CompileOptions(arm, 3, java.util.Map.of()), dir);
        assertFalse(art.hasLibrary());
        assertTrue(art.note().orElseThrow().contains("no cross compiler for aarch64-linux-gnu"), art.note().toString());
        assertFalse(Files.exists(dir.resolve("lib.so")));
        assertTrue(Files.size(dir.resolve("src/kernels.c")) > 0 && Files.size(dir.resolve("src/entry.c")) > 0);
        String err = assertThrows(ArtifactException.class, () -> CompiledModel.load(dir)).getMessage();
        assertTrue(err.contains("has no lib.so"), err);
    }

    @Test
    void callsReadingNoDataBecomeParametersAndEmptyTensorsFlowThrough() throws Exception {
        // sum/max over an empty axis read no data: their results (0 and -inf) are computed at compile
        // time, and so is the add on the computed zeros; exp of an empty tensor is empty. A kernel remains for exp(%y).
        IRModule m = GraphPlanTest.optimized("""
                def @main(%x: Tensor[(2, 0, 4), float32], %y: Tensor[(3), float32], %z: Tensor[(0, 3), float32]) {
                  %0 = sum(%x, axis=[1], keepdims=True);
                  %1 = add(%0, 1f);
                  %2 = max(%x, axis=[1]);
                  (%1, %2, exp(%y), exp(%z))
                }
                """);
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(m, CompileOptions.host(3), tmp.resolve("empty"));
        assertEquals(List.of("fused_exp_0"), art.graph().kernels().stream().map(GraphPlan.Kernel::name).toList());
        NDArray x = NDArray.zeros(DType.FLOAT32, 2, 0, 4), y = random(3, 3), z = NDArray.zeros(DType.FLOAT32, 0, 3);
        TupleValue want = (TupleValue) Interpreter.runMain(m, x, y, z);
        try (CompiledModel cm = CompiledModel.load(art.dir())) {
            List<NDArray> got = cm.run(List.of(x, y, z));
            assertEquals(4, got.size());
            for (int i = 0; i < 4; i++) {
                NDArray e = ((TensorValue) want.fields().get(i)).data();
                assertArrayEquals(e.shape(), got.get(i).shape(), "output " + i);
                for (int k = 0; k < e.elementCount(); k++) assertEquals(e.getDouble(k), got.get(i).getDouble(k), 1e-6, "output " + i + "[" + k + "]");
            }
            assertEquals(1.0, got.get(0).getDouble(0));
            assertEquals(Double.NEGATIVE_INFINITY, got.get(1).getDouble(0));
        }
    }

    @Test
    void callsOnEmptyTensorsAndValuesComputedFromThemAreComputedAtCompileTime() throws Exception {
        // log-sum-exp over an empty axis, as the ONNX importer writes it: max(x) is -inf (from the empty x
        // alone), then exp(x - max) reads x (empty) and the max: no run-time data, so no kernel sees an
        // empty tensor. A weight beside an empty tensor is not folded: w + sum(x) stays a kernel.
        IRModule m = GraphPlanTest.optimized("""
                def @main(%x: Tensor[(2, 0, 4), float32], %w: Tensor[(2, 1, 4), float32]) {
                  %0 = max(%x, axis=[1], keepdims=True);
                  %1 = exp(subtract(%x, %0));
                  %2 = add(log(sum(%1, axis=[1], keepdims=True)), %0);
                  (%2, add(%w, sum(%x, axis=[1], keepdims=True)))
                }
                """);
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(m, CompileOptions.host(3), tmp.resolve("lse"));
        assertEquals(List.of("fused_add_0"), art.graph().kernels().stream().map(GraphPlan.Kernel::name).toList());
        NDArray x = NDArray.zeros(DType.FLOAT32, 2, 0, 4), w = random(4, 2, 1, 4);
        TupleValue want = (TupleValue) Interpreter.runMain(m, x, w);
        try (CompiledModel cm = CompiledModel.load(art.dir())) {
            List<NDArray> got = cm.run(List.of(x, w));
            for (int i = 0; i < 2; i++) {
                NDArray e = ((TensorValue) want.fields().get(i)).data();
                assertArrayEquals(e.shape(), got.get(i).shape(), "output " + i);
                for (int k = 0; k < e.elementCount(); k++) assertEquals(e.getDouble(k), got.get(i).getDouble(k), 1e-6, "output " + i + "[" + k + "]");
            }
            assertEquals(Double.NEGATIVE_INFINITY, got.get(0).getDouble(0));
        }
    }

    @Test
    void aGraphWithoutKernelsStillRuns() throws Exception {
        // A flatten of the input is a reshape-only group: it aliases the input, so the artifact has no
        // kernel at all, only the executor copying the input's bytes to the output.
        IRModule m = GraphPlanTest.optimized("""
                def @main(%x: Tensor[(2, 3, 4), float32]) {
                  nn.batch_flatten(%x)
                }
                """);
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(m, CompileOptions.host(3), tmp.resolve("nokernels"));
        assertEquals(0, art.kernels().size());
        NDArray x = random(5, 2, 3, 4);
        try (CompiledModel cm = CompiledModel.load(art.dir())) {
            NDArray got = cm.run(List.of(x)).getFirst();
            assertArrayEquals(new int[] {2, 12}, got.shape());
            for (int k = 0; k < 24; k++) assertEquals(x.getDouble(k), got.getDouble(k));
        }
    }
}
