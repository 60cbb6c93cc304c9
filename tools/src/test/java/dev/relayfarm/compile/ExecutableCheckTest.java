package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.conformance.OnnxTestCase;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check after type inference: what the graph executor certainly cannot run is rejected naming the construct
 * and where it is; what the optimizer can still make executable passes (and compiles); every shared model passes;
 * and every ONNX node test it rejects also fails at codegen (it never rejects what compiles).
 */
class ExecutableCheckTest {
    @TempDir
    Path tmp;

    static IRModule typed(String text) {
        return Stages.inferTypes(Stages.importModel(ModelSource.of("t.relay", ModelFormat.RELAY, ("#[version = \"0.0.5\"]\n" + text).getBytes(StandardCharsets.UTF_8)), ""));
    }

    static String rejected(String text) {
        IRModule m = typed(text);
        GraphException e = assertThrows(GraphException.class, () -> Stages.checkExecutable(m));
        assertTrue(e instanceof CompileError);
        return e.getMessage();
    }

    @Test
    void anEmptyModuleHasNoMain() {
        assertEquals("the module has no @main, the function the graph executor runs (the module is empty)", rejected(""));
        assertEquals("the module has no @main, the function the graph executor runs (it defines @f)",
                rejected("def @f(%x: Tensor[(3), float32]) { nn.relu(%x) }\n"));
    }

    @Test
    void recursionIsNamedWithTheCall() {
        assertEquals("@main is recursive (@main -> @main, call at t.relay:2:63): the graph executor cannot run recursion (an ONNX Loop or a recursive"
                + " Relay function); it runs straight-line tensor dataflow", rejected("def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] { @main(%x) }\n"));
        // a loop as the ONNX importer writes one: a tail-recursive function whose recursive call sits in a branch on its
        // parameters; its exit test reads the data, so unroll-loops cannot unroll it
        String loop = """
                def @loop(%i: int32, %acc: Tensor[(3), float32]) -> Tensor[(3), float32] {
                  if (less(sum(%acc), 10f)) {
                    @loop(add(%i, 1), add(%acc, 1f))
                  } else {
                    %acc
                  }
                }
                def @main(%x: Tensor[(3), float32]) { @loop(0, %x) }
                """;
        String m = rejected(loop);
        assertTrue(m.startsWith("@main calls @loop, which is recursive (@loop -> @loop, call at t.relay:4:5)"), m);
        String local = rejected("""
                def @main(%n: int32) -> int32 {
                  let %fact = fn (%i: int32) -> int32 { if (%i <= 0) { 1 } else { %i * %fact(%i - 1) } };
                  %fact(%n)
                }
                """);
        assertTrue(local.startsWith("@main calls %fact"), local);
    }

    @Test
    void controlFlowOnInputValuesReferencesAndAdtsAreNamed() {
        String ifOnInputs = rejected("""
                def @main(%x: Tensor[(3), float32]) {
                  if (greater(sum(%x), 0f)) { nn.softmax(%x) } else { negative(%x) }
                }
                """);
        assertTrue(ifOnInputs.startsWith("an if in @main at t.relay:3:3 decides on the inputs' values"), ifOnInputs);
        String ref = rejected("def @main(%x: Tensor[(3), float32]) {\n  let %r = ref(%x);\n  ref_read(%r)\n}\n");
        assertTrue(ref.startsWith("a reference read (ref_read) in @main at t.relay:4:3"), ref);
        String adt = rejected("""
                type Box[A] { MkBox(A), }
                def @main(%x: Tensor[(3), float32]) {
                  match (MkBox(%x)) { MkBox(%y) => %y }
                }
                """);
        assertTrue(adt.startsWith("a match in @main at t.relay:4:3 decides on the inputs' values"), adt);
        String adtResult = rejected("type Box[A] { MkBox(A), }\ndef @main(%x: Tensor[(3), float32]) { MkBox(%x) }\n");
        assertTrue(adtResult.startsWith("the result of @main") && adtResult.contains("Box["), adtResult);
        String dynamic = rejected("def @main(%x: Tensor[(?, 3), float32]) { nn.relu(%x) }\n");
        assertEquals("input %x of @main at t.relay:2:11 has a dynamic shape Tensor[(?, 3), float32]: give it static dims (a job's shapes field, or --shape x=1x3)",
                dynamic);
        String valueShaped = rejected("def @main(%x: Tensor[(6), float32]) {\n  sigmoid(unique(%x).0)\n}\n");
        assertTrue(valueShaped.startsWith("operator unique in @main at t.relay:3:11 gives a result whose shape depends on the inputs' values"), valueShaped);
        String closure = rejected("def @main(%x: Tensor[(3), float32]) { fn (%y: Tensor[(3), float32]) { add(%x, %y) } }\n");
        assertTrue(closure.startsWith("the result of @main"), closure);
        assertTrue(closure.endsWith("the graph executor returns tensors and tuples of tensors only"), closure);
    }

    @Test
    void whatTheOptimizerCanStillFixPassesAndCompiles() throws Exception {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        // an if on a constant condition (fold-constant takes the branch), even one whose other branch recurses;
        // an if on the input's static shape (shape_of folds); an ADT in a dropped tuple field; a loop of static trip
        // count (unroll-loops); an if on the inputs' values with cheap element-wise branches (if-conversion)
        for (String text : List.of(
                """
                def @loop(%i: int32, %acc: Tensor[(3), float32]) -> Tensor[(3), float32] {
                  if (less(%i, 10)) { @loop(add(%i, 1), add(%acc, 1f)) } else { %acc }
                }
                def @main(%x: Tensor[(3), float32]) { @loop(0, %x) }
                """,
                "def @main(%x: Tensor[(3), float32]) { if (greater(sum(%x), 0f)) { nn.relu(%x) } else { negative(%x) } }\n",
                "def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] { if (True) { nn.relu(%x) } else { @main(%x) } }\n",
                "def @main(%x: Tensor[(3), float32]) { if (equal(take(shape_of(%x), 0), 3)) { nn.relu(%x) } else { %x } }\n",
                // an arange of constant bounds folds to a constant: its shape is static after all
                "def @main(%x: Tensor[(3), float32]) { add(%x, reshape(arange(0f, 3f, 1f), newshape=[3])) }\n")) {
            IRModule m = typed(text);
            assertEquals(Optional.empty(), ExecutableCheck.problem(m), text);
            ArtifactCompiler.compile(Stages.optimize(m, 3), CompileOptions.host(3), tmp.resolve("a" + text.hashCode()));
        }
    }

    @Test
    void everySharedModelPasses() {
        Optional<Path> models = OnnxTestData.models();
        Assumptions.assumeTrue(models.isPresent(), "../shared/onnx not found: skipped");
        int n = 0;
        for (Path dir : list(models.get())) {
            if (!Files.isRegularFile(dir.resolve("model.onnx"))) continue;
            IRModule m = Stages.inferTypes(importWithDataShapes(dir));
            assertEquals(Optional.empty(), ExecutableCheck.problem(m), dir.toString());
            n++;
        }
        for (Path f : OnnxTestData.light().map(ExecutableCheckTest::list).orElse(List.of())) {
            if (!f.toString().endsWith(".onnx")) continue;
            assertEquals(Optional.empty(), ExecutableCheck.problem(Stages.inferTypes(CompiledModelsTest.lightModel(f).module())), f.toString());
            n++;
        }
        assertTrue(n > 0);
    }

    /**
     * Soundness over the ONNX node suite: every test the check rejects also fails at codegen. (Those it passes may
     * still fail at codegen, e.g. an operator without a kernel: the check is not codegen.)
     */
    @Test
    void everyNodeTestItRejectsAlsoFailsAtCodegen() {
        Optional<Path> node = OnnxTestData.nodeTests();
        Assumptions.assumeTrue(node.isPresent() && CCompiler.host().isPresent(), "no ONNX node tests or C compiler: skipped");
        int checked = 0;
        List<String> rejectedButCompiles = new ArrayList<>();
        Map<String, String> rejections = new java.util.TreeMap<>();
        for (Path dir : list(node.get())) {
            IRModule typed;
            try {
                typed = Stages.inferTypes(importWithDataShapes(dir));
            } catch (RuntimeException e) {
                continue; // not importable as is (frozen inputs, unsupported ops): not this check's business
            }
            checked++;
            Optional<String> problem = ExecutableCheck.problem(typed);
            if (problem.isEmpty()) continue;
            rejections.put(dir.getFileName().toString(), problem.get());
            try {
                ArtifactCompiler.compile(Stages.optimize(typed, 3), CompileOptions.host(3), tmp.resolve(dir.getFileName()));
                rejectedButCompiles.add(dir.getFileName() + ": " + problem.get());
            } catch (RuntimeException expected) {
                // fails at codegen too, as the check said
            }
        }
        System.out.println("ExecutableCheck over " + checked + " node tests: " + rejections.size() + " rejected");
        rejections.forEach((k, v) -> System.out.println("  " + k + ": " + v));
        assertEquals(List.of(), rejectedButCompiles);
    }

    /** A model folder imported with its dynamic dims bound to its first data set's shapes (as CompiledModelsTest does). */
    static IRModule importWithDataShapes(Path dir) {
        OnnxTestCase tc = OnnxTestCase.load(dir);
        Set<String> inits = new HashSet<>();
        tc.model().getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        List<ValueInfoProto> fed = tc.model().getGraph().getInputList().stream().filter(v -> !inits.contains(v.getName())).toList();
        Map<String, List<Long>> shapes = new HashMap<>();
        if (!tc.dataSets().isEmpty()) {
            var ds = tc.dataSets().getFirst();
            for (int i = 0; i < fed.size() && i < ds.inputs().size(); i++) {
                if (ds.inputs().get(i) instanceof TensorProto t) shapes.put(fed.get(i).getName(), t.getDimsList());
            }
        }
        return OnnxImporter.importModel(tc.model(), "model.onnx", dir, ImportOptions.DEFAULT.withInputShapes(shapes));
    }

    static List<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
