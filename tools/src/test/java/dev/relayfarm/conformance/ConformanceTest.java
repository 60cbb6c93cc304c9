package dev.relayfarm.conformance;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The ONNX backend node suite through the importer and the interpreter, against a recorded floor
 * of passing tests (conformance-floor.properties): coverage may grow, never silently shrink.
 * Skips with a message when the suite is absent.
 */
class ConformanceTest {
    @Test
    void nodeSuitePassCountDoesNotDropBelowTheFloor() throws IOException {
        Optional<Path> node = OnnxTestData.nodeTests();
        assumeTrue(node.isPresent(), "ONNX node tests not found (../shared/onnx/node or apt-get install libonnx-testdata): skipped");
        boolean debian = node.get().equals(OnnxTestData.DEBIAN_NODE_TESTS);
        Properties floors = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/conformance-floor.properties")) {
            floors.load(in);
        }
        long floor = Long.parseLong(floors.getProperty(debian ? "debian-node.interp" : "node.interp"));
        List<Path> tests = Conformance.findTests(List.of(node.get()));
        long t0 = System.nanoTime();
        Conformance.Summary s = Conformance.run(tests, OnnxCheck.Options.DEFAULT, Runtime.getRuntime().availableProcessors(), 120_000, r -> { });
        System.out.print(s.table());
        System.out.printf("ONNX node conformance (%s): %s in %.1f s%n", node.get(), s.countsLine(), (System.nanoTime() - t0) / 1e9);
        assertEquals(tests.size(), s.results().size(), "every test reports a result");
        assertTrue(s.results().stream().allMatch(r -> r.status() == OnnxCheck.Status.PASS || !r.reason().isBlank()),
                "every failure has a reason");
        assertTrue(s.passed() >= floor, "passed " + s.passed() + " < floor " + floor + "\n" + s.table());
    }

    @Test
    void realModelsPassWhenPresent() {
        var models = OnnxTestData.models();
        assumeTrue(models.isPresent(), "../shared/onnx/models not found: skipped");
        // msra_teams_seg and the PaddleOCR models have dynamic input dims: the check binds them to the data's shape.
        for (String name : List.of("mnist8_cntk", "mnist_mlp_onnxmlir", "msra_teams_seg", "ppocr_cls_mobilenetv3", "ppocr_v4_det")) {
            Path dir = models.get().resolve(name);
            OnnxCheck.Result r = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
            assertEquals(OnnxCheck.Status.PASS, r.status(), r.line());
        }
    }
}
