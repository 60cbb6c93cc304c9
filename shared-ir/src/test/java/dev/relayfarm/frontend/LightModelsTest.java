package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The ONNX "light" models (../shared/onnx/light: nine CNNs whose weights are ConstantOfShape nodes):
 * each imports with static shapes (a dynamic input dim is bound to 1x3x224x224), type-checks as a
 * whole module, and on the input {@code arange(n)/n} gives {@code light_NAME_output_0.pb} within the
 * ONNX default tolerance (the README gives none). Skips when the folder is absent. By default only
 * the quick ones run; {@code -Drelayfarm.long=true} (mvn -Plong) runs all nine.
 */
class LightModelsTest {
    /** Import + interpreter run of at most a few seconds each; all nine take about a minute (vgg19 alone ~25 s). */
    private static final Set<String> FAST = Set.of("shufflenet", "squeezenet", "zfnet512", "bvlc_alexnet", "inception_v1", "inception_v2");
    private static final List<Long> DEFAULT_INPUT = List.of(1L, 3L, 224L, 224L);

    @TestFactory
    Stream<DynamicTest> lightModels() throws Exception {
        Optional<Path> dir = OnnxTestData.light();
        assumeTrue(dir.isPresent(), "ONNX light models not found (../shared/onnx/light): skipped");
        boolean all = Boolean.getBoolean("relayfarm.long");
        List<Path> models;
        try (Stream<Path> s = Files.list(dir.get())) {
            models = s.filter(p -> p.getFileName().toString().matches("light_.*\\.onnx")).sorted().toList();
        }
        assumeTrue(!models.isEmpty(), "no light_*.onnx in " + dir.get());
        return models.stream()
                .filter(p -> all || FAST.contains(name(p)))
                .map(p -> DynamicTest.dynamicTest(name(p), () -> check(p)));
    }

    private static String name(Path model) {
        return model.getFileName().toString().replaceFirst("^light_", "").replaceFirst("\\.onnx$", "");
    }

    private static void check(Path file) throws Exception {
        ModelProto proto = OnnxModels.read(file);
        ValueInfoProto input = graphInput(proto);
        ImportOptions options = ImportOptions.DEFAULT;
        TensorShapeProto shape = input.getType().getTensorType().getShape();
        if (shape.getDimList().stream().anyMatch(d -> !d.hasDimValue())) options = options.withInputShapes(Map.of(input.getName(), DEFAULT_INPUT));

        long t0 = System.nanoTime();
        IRModule m = OnnxImporter.importModel(file, options);
        long t1 = System.nanoTime();
        TensorType in = (TensorType) m.main().orElseThrow().params().getFirst().annotation();
        assertTrue(in.isStatic(), "static input " + in);
        var typed = TypeInference.infer(m);
        var ret = typed.typeOf(new GlobalVar("main")).retType();
        assertTrue(ret instanceof TensorType t && t.isStatic(), "static output type, got " + ret);
        long t2 = System.nanoTime();

        int[] dims = in.staticShape();
        int n = NDArray.elementCount(DType.FLOAT32, dims);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) i / n;
        Value v = Interpreter.runMain(m, NDArray.wrap(DType.FLOAT32, dims, x));
        long t3 = System.nanoTime();

        Path expectedFile = file.resolveSibling(file.getFileName().toString().replaceFirst("\\.onnx$", "_output_0.pb"));
        NDArray expected = OnnxTensors.toNDArray(TensorProto.parseFrom(Files.readAllBytes(expectedFile)), file.getParent(), expectedFile.toString());
        NDArray actual = ((TensorValue) v).data();
        assertEquals(ret, new TensorType(java.util.Arrays.stream(actual.shape()).mapToObj(d -> (dev.relayfarm.ir.Dim) dev.relayfarm.ir.Dim.of(d)).toList(), actual.dtype()),
                "the run's output matches the inferred type");
        Tolerance.ONNX_DEFAULT.compare(actual, expected).ifPresent(mm -> fail(file.getFileName() + ": " + mm.message()));
        System.out.printf("light %-14s import %6d ms, type check %5d ms, interpreter %7d ms%n", name(file),
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000);
    }

    /** The one graph input that is not an initializer (IR 3 models list initializers as inputs too). */
    private static ValueInfoProto graphInput(ModelProto m) {
        Set<String> inits = new HashSet<>();
        m.getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        List<ValueInfoProto> fed = m.getGraph().getInputList().stream().filter(v -> !inits.contains(v.getName())).toList();
        assertEquals(1, fed.size(), "one fed input");
        return fed.getFirst();
    }
}
