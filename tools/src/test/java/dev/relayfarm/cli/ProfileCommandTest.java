package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relayc profile} on mnist8_cntk: every kernel of the artifact in the table, shares summing to 100%, a convolution's FLOPs by hand. */
class ProfileCommandTest {
    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    private static Path mnist() {
        Path dir = OnnxTestData.models().map(p -> p.resolve("mnist8_cntk")).orElse(null);
        assumeTrue(dir != null && Files.isDirectory(dir), "../shared/onnx/models/mnist8_cntk not found (ONNX test data is not in the repository): skipped");
        return dir;
    }

    @Test
    void jsonRowsCoverEveryKernelWithSharesAndConvFlops(@TempDir Path tmp) throws Exception {
        Path keep = tmp.resolve("artifact");
        CliRun r = CliRun.relayc("profile", mnist().toString(), "--json", "--threads", "1", "--warmup", "1", "--runs", "5", "--peak-gflops", "100",
                "--keep", keep.toString());
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out().strip());
        assertEquals("mnist8_cntk", j.get("model").asText());
        assertEquals(100.0, j.get("peak_gflops").asDouble());
        List<String> names = new ArrayList<>();
        double shares = 0, kernelsMs = 0;
        JsonNode conv = null;
        for (JsonNode k : j.get("kernels")) {
            names.add(k.get("name").asText());
            shares += k.get("share").asDouble();
            kernelsMs += k.get("median_ms").asDouble();
            assertTrue(k.get("median_ms").asDouble() > 0, k.toString());
            assertTrue(k.get("calls").asInt() >= 1, k.toString());
            // the first layer's convolution: of the two, the one with fewer FLOPs (blocked NCHW1c like the second)
            if (k.get("ops").asText().contains("conv2d") && (conv == null || k.get("flops").asLong() < conv.get("flops").asLong())) conv = k;
        }
        List<String> manifest = Manifest.read(keep).kernels().stream().map(Manifest.Kernel::name).toList();
        assertEquals(manifest.stream().sorted().toList(), names.stream().sorted().toList(), "one row per kernel of the artifact");
        assertEquals(1.0, shares, 1e-9, "shares of the kernels' total");
        assertEquals(j.get("kernels_ms").asDouble(), kernelsMs, 1e-9);
        assertTrue(j.get("wall_ms").asDouble() >= j.get("copies_ms").asDouble() && j.get("wall_ms").asDouble() > 0, r.out());
        // the first convolution: 1 -> 8 channels, 5x5, padded to keep 28x28: 2 FLOPs x 8*28*28 outputs x 1*5*5 MACs each
        assertTrue(conv != null, "a conv2d kernel: " + names);
        assertEquals(2L * 8 * 28 * 28 * 25, conv.get("flops").asLong(), conv.toString());
        assertEquals(conv.get("flops").asDouble() / (conv.get("median_ms").asDouble() * 1e6), conv.get("gflops").asDouble(), 1e-6 * conv.get("gflops").asDouble());
        assertEquals(conv.get("gflops").asDouble() / 100, conv.get("peak_fraction").asDouble(), 1e-9);
        // a kernel without a convolution or matrix product has no FLOP count
        for (JsonNode k : j.get("kernels")) if (k.get("ops").asText().equals("nn.max_pool2d")) assertTrue(k.get("flops").isNull(), k.toString());
    }

    @Test
    void tableShowsTheTopKernelsAndTheTotals() {
        CliRun r = CliRun.relayc("profile", mnist().toString(), "--threads", "1", "--warmup", "0", "--runs", "3", "--top", "2");
        assertEquals(0, r.exitCode(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.getFirst().startsWith("kernel") && lines.getFirst().contains("GFLOP/s") && lines.getFirst().contains("%peak"), r.out());
        assertTrue(lines.get(3).matches("\\(\\d+ more kernels: .*"), r.out());
        assertTrue(lines.get(4).startsWith("total: kernels ") && lines.get(4).contains("copies") && lines.get(4).contains("wall"), r.out());
    }

    @Test
    void relayTextIsProfiledOnSeededRandomInputs(@TempDir Path tmp) throws Exception {
        // a quantized program is Relay text (relayc quantize's output): its inputs come from the compiled signature
        Path relay = tmp.resolve("int8_conv.relay");
        java.nio.file.Files.writeString(relay, """
                def @main(%x: Tensor[(1, 8, 6, 6), uint8], %w: Tensor[(16, 8, 3, 3), int8]) {
                  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3], out_dtype="int32");
                  nn.relu(%0)
                }
                """);
        CliRun r = CliRun.relayc("profile", relay.toString(), "--threads", "1", "--warmup", "0", "--runs", "3", "--peak-gflops", "100", "--peak-gbps", "10");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("conv2d_NCHW_int8_dot.x86") && r.out().contains("nn.conv2d+nn.relu"), r.out());
        assertTrue(r.out().contains("int8_conv.relay: 1 thread(s), median of 3 profiled runs"), r.out());
    }

    @Test
    void missingModelIsAnErrorNamingIt(@TempDir Path tmp) {
        CliRun r = CliRun.relayc("profile", tmp.resolve("missing.onnx").toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("missing.onnx") && r.err().contains("neither an .onnx file"), r.err());
        CliRun noFusion = CliRun.relayc("profile", tmp.resolve("missing.onnx").toString(), "-O", "0");
        assertEquals(1, noFusion.exitCode());
        assertTrue(noFusion.err().contains("-O1 or higher"), noFusion.err());
        CliRun badWinograd = CliRun.relayc("profile", tmp.resolve("missing.onnx").toString(), "--winograd", "maybe");
        assertEquals(1, badWinograd.exitCode());
        assertTrue(badWinograd.err().contains("--winograd must be on or off, got maybe"), badWinograd.err());
    }
}
