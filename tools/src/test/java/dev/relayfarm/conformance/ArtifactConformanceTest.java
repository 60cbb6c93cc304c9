package dev.relayfarm.conformance;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.conformance.Conformance;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The ONNX node suite through compiled artifacts ({@code relayc conformance --backend c}: every test
 * optimized at -O3, compiled to an artifact, loaded and run) against the floor {@code node.c} of
 * conformance-floor.properties: coverage may grow, never silently shrink. -Plong only (it compiles
 * a shared library per test); skips when the suite or a C compiler is absent.
 */
class ArtifactConformanceTest {
    @Test
    void nodeSuiteThroughArtifactsDoesNotDropBelowTheFloor() throws IOException {
        assumeTrue(Boolean.getBoolean("relayfarm.long"), "the node suite through artifacts: -Plong only");
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Optional<Path> node = OnnxTestData.nodeTests();
        assumeTrue(node.isPresent(), "ONNX node tests not found (../shared/onnx/node or apt-get install libonnx-testdata): skipped");
        boolean debian = node.get().equals(OnnxTestData.DEBIAN_NODE_TESTS);
        Properties floors = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/conformance-floor.properties")) {
            floors.load(in);
        }
        long floor = Long.parseLong(floors.getProperty(debian ? "debian-node.c" : "node.c", "0"));
        List<Path> tests = Conformance.findTests(List.of(node.get()));
        long t0 = System.nanoTime();
        OnnxCheck.Options options = new OnnxCheck.Options(ImportOptions.DEFAULT, null, m -> OptPipeline.optimize(m, 3),
                new CBackend(CompileOptions.host(3), 1));
        Conformance.Summary s = Conformance.run(tests, options, Runtime.getRuntime().availableProcessors(), 120_000, r -> { });
        System.out.print(s.table());
        System.out.printf("ONNX node conformance through artifacts (%s): %s in %.1f s%n", node.get(), s.countsLine(), (System.nanoTime() - t0) / 1e9);
        assertEquals(tests.size(), s.results().size(), "every test reports a result");
        assertTrue(s.results().stream().allMatch(r -> r.status() == OnnxCheck.Status.PASS || !r.reason().isBlank()), "every failure has a reason");
        assertTrue(s.passed() >= floor, "passed " + s.passed() + " < floor " + floor + "\n" + s.table());
    }
}
