package dev.relayfarm.passes;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * fuse-ops on real CNNs (the ONNX light models): the fused module has groups and no operator call
 * outside them; every conv2d whose only consumer is an element-wise/broadcast op of its own shape
 * (bias add, relu, a residual add of a non-conv value) shares a group with that consumer, as TVM
 * fuses them; and the interpreter gives the same output before and after. squeezenet runs by
 * default; -Drelayfarm.long=true adds resnet50, inception_v1 and shufflenet.
 */
class FuseOpsModelTest {
    private static final Set<String> FUSED_FOLLOWERS = Set.of("add", "nn.bias_add", "nn.relu", "multiply");

    @TestFactory
    Stream<DynamicTest> lightModels() {
        var dir = OnnxTestData.light();
        assumeTrue(dir.isPresent(), "ONNX light models not found: skipped");
        List<String> names = Boolean.getBoolean("relayfarm.long")
                ? List.of("squeezenet", "resnet50", "inception_v1", "shufflenet") : List.of("squeezenet");
        return names.stream().map(n -> DynamicTest.dynamicTest(n, () -> check(dir.get().resolve("light_" + n + ".onnx"))));
    }

    /** combine-parallel-conv2d on inception_v1 (three 1x1 convolutions per inception block), then fuse-ops. */
    @org.junit.jupiter.api.Test
    void inceptionCombinesParallelConvolutions() {
        var dir = OnnxTestData.light();
        assumeTrue(dir.isPresent(), "ONNX light models not found: skipped");
        Path file = dir.get().resolve("light_inception_v1.onnx");
        assumeTrue(Files.exists(file), file + " not found");
        IRModule before = new PassContext(PassOptions.level(0)).typesOf(OnnxImporter.importModel(file, ImportOptions.DEFAULT)).module();
        IRModule combined = PassAssert.run("combine-parallel-conv2d", before).module();
        IRModule fused = PassAssert.run("fuse-ops", combined).module();
        int convsBefore = countOp(before, "nn.conv2d");
        int convsAfter = countOp(combined, "nn.conv2d");
        int slices = countOp(combined, "strided_slice") - countOp(before, "strided_slice");
        assertTrue(convsAfter < convsBefore, convsBefore + " -> " + convsAfter);
        // Each combination of k branches removes k - 1 convolutions and adds k slices.
        assertTrue(slices > convsBefore - convsAfter, slices + " slices");
        TensorType in = (TensorType) before.main().orElseThrow().params().getFirst().annotation();
        int[] dims = in.staticShape();
        int n = NDArray.elementCount(DType.FLOAT32, dims);
        double[] x = new double[n];
        for (int i = 0; i < n; i++) x[i] = (double) i / n;
        NDArray arg = NDArray.fromDoubles(DType.FLOAT32, dims, x);
        NDArray want = ((TensorValue) Interpreter.runMain(before, arg)).data();
        NDArray got = ((TensorValue) Interpreter.runMain(fused, arg)).data();
        new Tolerance(1e-4, 1e-5).compare(got, want).ifPresent(m -> fail("inception_v1: " + m.message()));
        System.out.printf("combine-parallel-conv2d inception_v1: conv2d %d -> %d (%d slices); then fuse-ops: %s%n",
                convsBefore, convsAfter, slices, FusionStats.of(fused));
    }

    private static void check(Path file) {
        assumeTrue(Files.exists(file), file + " not found");
        ModelProto proto = OnnxModels.read(file);
        ValueInfoProto input = graphInput(proto);
        ImportOptions options = ImportOptions.DEFAULT;
        if (input.getType().getTensorType().getShape().getDimList().stream().anyMatch(d -> !d.hasDimValue())) {
            options = options.withInputShapes(Map.of(input.getName(), List.of(1L, 3L, 224L, 224L)));
        }
        IRModule before = new PassContext(PassOptions.level(0)).typesOf(OnnxImporter.importModel(file, options)).module();
        long t0 = System.nanoTime();
        IRModule after = PassAssert.run("fuse-ops", before).module();
        long t1 = System.nanoTime();

        FusionStats stats = FusionStats.of(after);
        assertTrue(stats.groups() > 0, "no groups");
        assertEquals(0, stats.unfusedOps(), "operator calls left outside groups");
        assertEquals(opCalls(before), stats.fusedOps(), "every operator call is in exactly one group");

        int expected = convsWithFusableFollower(before);
        int fusedConvs = convsFusedWithFollower(after);
        // resnet50 and shufflenet put batch_norm (opaque until simplify-inference) after their convolutions.
        if (!file.getFileName().toString().matches("light_(resnet50|shufflenet)\\.onnx")) assertTrue(expected > 0, "the model has conv2d -> bias/relu");
        assertEquals(expected, fusedConvs, "conv2d fused with its element-wise follower");

        TensorType in = (TensorType) after.main().orElseThrow().params().getFirst().annotation();
        int[] dims = in.staticShape();
        int n = NDArray.elementCount(DType.FLOAT32, dims);
        double[] x = new double[n];
        for (int i = 0; i < n; i++) x[i] = (double) i / n;
        NDArray arg = NDArray.fromDoubles(DType.FLOAT32, dims, x);
        long t2 = System.nanoTime();
        NDArray want = ((TensorValue) Interpreter.runMain(before, arg)).data();
        long t3 = System.nanoTime();
        NDArray got = ((TensorValue) Interpreter.runMain(after, arg)).data();
        long t4 = System.nanoTime();
        new Tolerance(1e-5, 1e-6).compare(got, want).ifPresent(m -> fail(file.getFileName() + ": " + m.message()));
        System.out.printf("fuse-ops %-14s %4d ops -> %4d groups (%.2f ops/group, largest %d), %d/%d conv2d fused with a follower; "
                        + "fuse %d ms; interpreter unfused %d ms, fused %d ms; conv2d consumers %s%n",
                file.getFileName(), stats.fusedOps(), stats.groups(), stats.opsPerGroup(), stats.largestGroup(), fusedConvs,
                countOp(before, "nn.conv2d"), (t1 - t0) / 1_000_000, (t3 - t2) / 1_000_000, (t4 - t3) / 1_000_000, followers(before));
    }

    private static boolean isOp(Expr e, String name) {
        return e instanceof Call c && c.callee() instanceof Op op && (name == null || op.name().equals(name));
    }

    private static int opCalls(IRModule m) {
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow())) if (isOp(e, null)) n++;
        return n;
    }

    private static int countOp(IRModule m, String name) {
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow())) if (isOp(e, name)) n++;
        return n;
    }

    /** Consumers of each node among the nodes under {@code root} (not entering Primitive functions' inside from outside). */
    private static IdentityHashMap<Expr, List<Expr>> consumers(Expr root) {
        IdentityHashMap<Expr, List<Expr>> users = new IdentityHashMap<>();
        for (Expr e : ExprTraversal.postOrder(root)) {
            for (Expr c : e.children()) users.computeIfAbsent(c, k -> new ArrayList<>()).add(e);
        }
        return users;
    }

    /** conv2d whose single consumer is a follower of the same shape whose other inputs are not conv2d results. */
    private static int convsWithFusableFollower(IRModule m) {
        Function main = m.main().orElseThrow();
        var users = consumers(main.body());
        var types = new PassContext(PassOptions.level(0)).typesOf(m);
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(main.body())) {
            if (!isOp(e, "nn.conv2d")) continue;
            List<Expr> us = users.getOrDefault(e, List.of());
            if (us.size() != 1 || !(us.getFirst() instanceof Call u) || !(u.callee() instanceof Op op) || !FUSED_FOLLOWERS.contains(op.name())) continue;
            if (!types.typeOf(u).equals(types.typeOf(e))) continue;
            if (u.args().stream().anyMatch(a -> a != e && isOp(a, "nn.conv2d"))) continue;
            n++;
        }
        return n;
    }

    /** conv2d calls inside Primitive groups whose consumer inside the group is a follower op. */
    private static int convsFusedWithFollower(IRModule m) {
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow())) {
            if (!(e instanceof Function g && g.isPrimitive())) continue;
            var users = consumers(g.body());
            for (Expr x : ExprTraversal.postOrder(g.body())) {
                if (!isOp(x, "nn.conv2d")) continue;
                if (users.getOrDefault(x, List.of()).stream().anyMatch(u -> u instanceof Call c && c.callee() instanceof Op op
                        && FUSED_FOLLOWERS.contains(op.name()))) n++;
            }
        }
        return n;
    }

    private static Map<String, Integer> followers(IRModule m) {
        var users = consumers(m.main().orElseThrow().body());
        Map<String, Integer> out = new java.util.TreeMap<>();
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow().body())) {
            if (!isOp(e, "nn.conv2d")) continue;
            for (Expr u : users.getOrDefault(e, List.of())) {
                out.merge(u instanceof Call c && c.callee() instanceof Op op ? op.name() : u.getClass().getSimpleName(), 1, Integer::sum);
            }
        }
        return out;
    }

    private static ValueInfoProto graphInput(ModelProto m) {
        Set<String> inits = new HashSet<>();
        m.getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        return m.getGraph().getInputList().stream().filter(v -> !inits.contains(v.getName())).findFirst().orElseThrow();
    }
}
