package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.conformance.OnnxTestCase;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The model check: every model of {@code ../shared/onnx/models} and {@code ../shared/onnx/light}
 * gives, at -O1, -O2 and -O3, the output it gives at -O0 (interpreter, rtol 1e-3, atol 1e-5: folding
 * scales into weights reassociates float32 products; a model folder whose manifest sets a looser rtol/atol, with its
 * reason, is held to that: mlsd_tiny_320 multiplies by a mask of float32 equalities that rounding flips). Prints one row
 * per model and level: distinct nodes, fused (Primitive) groups, and pipeline time. By default only the quick models run;
 * {@code -Drelayfarm.long=true} (mvn -Plong) runs all of them. Skips when the folders are absent.
 */
class OptLevelsTest {
    private static final Set<String> FAST = Set.of("mnist8_cntk", "mnist_mlp_onnxmlir", "squeezenet", "super_resolution_10");
    private static final Tolerance TOLERANCE = new Tolerance(1e-3, 1e-5);

    private record ModelInput(String name, IRModule module, List<NDArray> inputs, Tolerance tolerance) {}

    @TestFactory
    Stream<DynamicTest> everyLevelMatchesLevelZero() throws Exception {
        boolean all = Boolean.getBoolean("relayfarm.long");
        List<DynamicTest> tests = new ArrayList<>();
        Path models = OnnxTestData.models().orElse(null);
        Path light = OnnxTestData.light().orElse(null);
        assumeTrue(models != null || light != null, "../shared/onnx/models and ../shared/onnx/light not found: skipped");
        if (models != null) {
            try (Stream<Path> s = Files.list(models)) {
                for (Path dir : s.filter(p -> Files.isRegularFile(p.resolve("model.onnx"))).sorted().toList()) {
                    String name = dir.getFileName().toString();
                    if (all || FAST.contains(name)) tests.add(DynamicTest.dynamicTest(name, () -> check(fromTestFolder(dir))));
                }
            }
        }
        if (light != null) {
            try (Stream<Path> s = Files.list(light)) {
                for (Path f : s.filter(p -> p.getFileName().toString().matches("light_.*\\.onnx")).sorted().toList()) {
                    String name = BenchInputs.modelName(f);
                    if (all || FAST.contains(name)) tests.add(DynamicTest.dynamicTest(name, () -> check(fromLightModel(name, f))));
                }
            }
        }
        return tests.stream();
    }

    static void check(ModelInput model) {
        NDArray[] inputs = model.inputs().toArray(NDArray[]::new);
        Value reference = Interpreter.runMain(model.module(), inputs);
        for (int level = 0; level <= 3; level++) {
            PassContext ctx = new PassContext(PassOptions.level(level));
            long t0 = System.nanoTime();
            IRModule optimized = OptPipeline.build().run(model.module(), ctx).module();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            Value got = Interpreter.runMain(optimized, inputs);
            compare(model.name() + " -O" + level, got, reference, model.tolerance());
            System.out.printf("opt-levels %-22s -O%d  nodes %7d  fused groups %5d  pipeline %6d ms%n", model.name(), level,
                    ExprTraversal.countNodes(optimized), primitiveGroups(optimized), ms);
        }
    }

    static int primitiveGroups(IRModule module) {
        Set<Expr> seen = new HashSet<>();
        for (Function f : module.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof Function g && g.isPrimitive()) seen.add(g);
        }
        return seen.size();
    }

    private static void compare(String where, Value got, Value want, Tolerance tolerance) {
        switch (want) {
            case TensorValue(NDArray w) -> {
                if (!(got instanceof TensorValue(NDArray g))) fail(where + ": expected a tensor, got " + got);
                else tolerance.compare(g, w).ifPresent(m -> fail(where + ": " + m.message()));
            }
            case TupleValue(List<Value> ws) -> {
                if (!(got instanceof TupleValue(List<Value> gs))) fail(where + ": expected a tuple, got " + got);
                else {
                    assertEquals(ws.size(), gs.size(), where);
                    for (int i = 0; i < ws.size(); i++) compare(where + " output " + i, gs.get(i), ws.get(i), tolerance);
                }
            }
            default -> fail(where + ": unexpected value " + want);
        }
    }

    /** A model folder: the first data set's inputs, their shapes bound at import. */
    private static ModelInput fromTestFolder(Path dir) {
        OnnxTestCase tc = OnnxTestCase.load(dir);
        Set<String> inits = new HashSet<>();
        tc.model().getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        List<String> fed = tc.model().getGraph().getInputList().stream().map(ValueInfoProto::getName).filter(n -> !inits.contains(n)).toList();
        OnnxTestCase.DataSet ds = tc.dataSets().getFirst();
        List<NDArray> inputs = new ArrayList<>();
        Map<String, List<Long>> shapes = new LinkedHashMap<>();
        for (int i = 0; i < ds.inputs().size(); i++) {
            NDArray a = OnnxTensors.toNDArray((TensorProto) ds.inputs().get(i), dir, ds.dir().toString());
            inputs.add(a);
            List<Long> dims = new ArrayList<>();
            for (int d : a.shape()) dims.add((long) d);
            shapes.put(fed.get(i), dims);
        }
        IRModule m = OnnxImporter.importModel(tc.model(), "model.onnx", dir, ImportOptions.DEFAULT.withInputShapes(shapes));
        Tolerance tol = OnnxCheck.manifestTolerance(dir).map(t -> new Tolerance(Math.max(t.rtol(), TOLERANCE.rtol()), Math.max(t.atol(), TOLERANCE.atol())))
                .orElse(TOLERANCE);
        return new ModelInput(dir.getFileName().toString(), m, inputs, tol);
    }

    /** A light model: input arange(n)/n of shape 1x3x224x224 (as LightModelsTest). */
    private static ModelInput fromLightModel(String name, Path file) throws Exception {
        ModelProto proto = OnnxModels.read(file);
        Set<String> inits = new HashSet<>();
        proto.getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        String input = proto.getGraph().getInputList().stream().map(ValueInfoProto::getName).filter(n -> !inits.contains(n)).findFirst().orElseThrow();
        IRModule m = OnnxImporter.importModel(file, ImportOptions.DEFAULT.withInputShapes(Map.of(input, List.of(1L, 3L, 224L, 224L))));
        int[] dims = {1, 3, 224, 224};
        int n = NDArray.elementCount(DType.FLOAT32, dims);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) i / n;
        assertTrue(m.main().isPresent());
        return new ModelInput(name, m, List.of(NDArray.wrap(DType.FLOAT32, dims, x)), TOLERANCE);
    }
}
