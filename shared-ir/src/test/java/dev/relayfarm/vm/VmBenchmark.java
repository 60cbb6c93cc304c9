package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.runtime.JvmThreads;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * VM versus graph executor on static models (issue 19: "on static models the VM path costs at most 5% over the graph
 * executor"). The same module, the same kernels (both lower through {@link ArtifactCompiler#lower} with default
 * schedules), one thread each; the time of a call includes copying the inputs in and the outputs out on both sides.
 * Prints a table; asserts only that the two agree. Run by hand:
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=VmBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.seconds=2] [-Drelayfarm.bench.shared=false]
 * </pre>
 * Besides three small Relay programs, the static models of {@code ../shared/onnx} in {@link #SHARED} (skipped when
 * absent or with {@code shared=false}).
 */
class VmBenchmark {
    @TempDir
    Path tmp;

    /** {@code n} softmaxes in a chain on a small tensor: many cheap kernels, so per-call overhead shows. */
    static String softmaxChain(int n) {
        StringBuilder sb = new StringBuilder("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(16, 64), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < n; i++) {
            sb.append("  %").append(i).append(" = nn.softmax(").append(prev).append(");\n");
            prev = "%" + i;
        }
        return sb.append("  exp(").append(prev).append(")\n}\n").toString();
    }

    static final String CONV = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 16, 56, 56), float32], %w1: Tensor[(32, 16, 3, 3), float32], %w2: Tensor[(32, 32, 3, 3), float32]) {
              %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]);
              %1 = nn.relu(%0);
              %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]);
              nn.relu(%2)
            }
            """;

    /** Shared static models (path under {@code ../shared/onnx}, the input shape to bind or null): small and large, few and many kernels. */
    static final List<String[]> SHARED = List.of(
            new String[] {"models/mnist8_cntk/model.onnx", null},
            new String[] {"models/ppocr_cls_mobilenetv3/model.onnx", "x=1x3x48x192"},
            new String[] {"light/light_squeezenet.onnx", null},
            new String[] {"light/light_shufflenet.onnx", null},
            new String[] {"light/light_inception_v1.onnx", null},
            new String[] {"light/light_resnet50.onnx", null});

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void vmVersusGraphExecutor() throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        double seconds = Double.parseDouble(System.getProperty("relayfarm.bench.seconds", "2"));
        List<String[]> models = new ArrayList<>();
        models.add(new String[] {"mlp (examples/mlp.relay)", Files.readString(Path.of("..", "examples", "mlp.relay"))});
        models.add(new String[] {"softmax chain x50 (16x64)", softmaxChain(50)});
        models.add(new String[] {"conv3x3-relu x2 (16->32, 56x56)", CONV});
        List<IRModule> modules = new ArrayList<>();
        for (String[] model : models) modules.add(RelayParser.parseModule(model[1], model[0]));
        Optional<Path> shared = OnnxTestData.root();
        if (shared.isPresent() && !"false".equals(System.getProperty("relayfarm.bench.shared"))) {
            for (String[] s : SHARED) {
                Path file = shared.get().resolve(s[0]);
                if (!Files.isRegularFile(file)) continue;
                models.add(new String[] {file.getFileName().toString().equals("model.onnx") ? file.getParent().getFileName().toString() : file.getFileName().toString(), null});
                modules.add(Stages.inferTypes(Stages.importModel(ModelSource.read(file), s[1] == null ? "" : s[1])));
            }
        }
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%n%-34s %8s %12s %12s %8s%n", "model", "calls", "graph (ms)", "vm (ms)", "vm/graph"));
        for (String[] model : models) {
            IRModule m = modules.get(models.indexOf(model));
            List<NDArray> inputs = inputs(m);
            Path dir = tmp.resolve("m" + models.indexOf(model));
            ArtifactCompiler.Artifact art = ArtifactCompiler.compile(OptPipeline.optimize(m, 3), CompileOptions.host(3), dir);
            try (CompiledModel graph = CompiledModel.load(dir); VirtualMachine vm = VmCompiler.compile(m, CompileOptions.host(3)).load(CCompiler.host().orElseThrow())) {
                graph.setNumThreads(1);
                vm.setNumThreads(1);
                NDArray g = graph.run(inputs).getFirst();
                NDArray v = ((VmObject.Tensor) vm.run("main", inputs)).toNDArray();
                for (int i = 0; i < g.elementCount(); i++) assertEquals(g.getDouble(i), v.getDouble(i), 1e-5 + 1e-4 * Math.abs(g.getDouble(i)), model[0] + " element " + i);
                // compiling left the JIT busy with the compiler's methods, and the VM's loop not yet compiled: wait for quiet
                JvmThreads.awaitIdle(() -> {
                    graph.run(inputs);
                    vm.run("main", inputs);
                });
                // alternate the two so load on the (shared) machine hits both alike
                double[] graphMs = new double[5], vmMs = new double[5];
                for (int round = 0; round < 5; round++) {
                    graphMs[round] = median(() -> graph.run(inputs), seconds / 10);
                    vmMs[round] = median(() -> vm.run("main", inputs), seconds / 10);
                }
                double gm = best(graphMs), vmm = best(vmMs);
                table.append(String.format(Locale.ROOT, "%-34s %8d %12.3f %12.3f %8.2f%n", model[0], art.graph().steps().size(), gm, vmm, vmm / gm));
            }
        }
        System.out.println(table);
    }

    static List<NDArray> inputs(IRModule m) {
        IRModule typed = TypeInference.infer(m).module();
        Random r = new Random(7);
        List<NDArray> out = new ArrayList<>();
        for (Var p : typed.main().orElseThrow().params()) {
            TensorType t = (TensorType) p.annotation();
            NDArray a = NDArray.zeros(DType.FLOAT32, t.staticShape());
            for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, r.nextGaussian() * 0.1);
            out.add(a);
        }
        return out;
    }

    /** The median time of one call in ms, calling for about {@code seconds}. */
    static double median(Supplier<?> call, double seconds) {
        List<Double> times = new ArrayList<>();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end || times.size() < 5) {
            long t0 = System.nanoTime();
            call.get();
            times.add((System.nanoTime() - t0) / 1e6);
        }
        double[] a = times.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a[a.length / 2];
    }

    static double best(double[] medians) {
        return Arrays.stream(medians).min().orElseThrow();
    }
}
