package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relayc quantize}: the printed integer program parses back, type-checks and runs; bad options are user errors. */
class QuantizeCommandTest {
    @TempDir
    Path tmp;

    private static final String NET = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 4), float32]) {
              %0 = nn.dense(%x, ones(shape=[3, 4], dtype="float32"));
              %1 = nn.relu(%0);
              nn.dense(%1, full(0.5f, shape=[2, 3], dtype="float32"))
            }
            """;

    @Test
    void quantizesARelayProgramWithRandomCalibrationInputs() throws Exception {
        Path in = tmp.resolve("net.relay");
        Files.writeString(in, NET);
        Path out = tmp.resolve("q.relay");
        CliRun r = CliRun.relayc("quantize", in.toString(), "-o", out.toString(), "--calibration", "minmax", "--calib-samples", "8");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.err().contains("minmax calibration on 8 inputs"), r.err());
        String text = Files.readString(out);
        assertTrue(text.contains("out_dtype=\"int32\"") && text.contains("int8"), text);
        IRModule q = TypeInference.infer(RelayParser.parseModule(text, "q")).module();
        NDArray x = NDArray.fromDoubles(dev.relayfarm.ir.DType.FLOAT32, new int[] {1, 4}, new double[] {0.25, 0.5, 0.75, 1});
        NDArray y = ((TensorValue) Interpreter.runMain(q, x)).data();
        // float: relu(2.5 * 3 ones) -> 2.5 each, then 0.5 * 3 * 2.5 = 3.75
        assertEquals(3.75, y.getDouble(0), 0.1);
    }

    @Test
    void badOptionsAreUserErrors() throws Exception {
        Path in = tmp.resolve("net.relay");
        Files.writeString(in, NET);
        CliRun r = CliRun.relayc("quantize", in.toString(), "--calibration", "median");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("--calibration must be kl, minmax, percentile or global"), r.err());
        assertEquals(1, CliRun.relayc("quantize", in.toString(), "--calib-samples", "65").exitCode());
        CliRun wide = CliRun.relayc("quantize", in.toString(), "--mixed-precision", "1", "--wide-bits", "20");
        assertEquals(1, wide.exitCode());
        assertTrue(wide.err().contains("9 to 16 bits"), wide.err());
    }

    @Test
    void mixedPrecisionGivesTheMostSensitivePointSixteenBits() throws Exception {
        Path in = tmp.resolve("net.relay");
        Files.writeString(in, NET);
        CliRun r = CliRun.relayc("quantize", in.toString(), "--calibration", "minmax", "--calib-samples", "8", "--mixed-precision", "1");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.err().contains("(16 bits)"), r.err());
        assertTrue(r.out().contains("dtype=\"int16\"") || r.out().contains("dtype=\"uint16\""), r.out());
    }

    @Test
    void quantizesMnist8() throws Exception {
        var model = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile);
        assumeTrue(model.isPresent(), "../shared/onnx is absent: skipped");
        CliRun r = CliRun.relayc("quantize", model.get().toString(), "--calibration", "kl", "--calib-samples", "16", "--skip-first");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("nn.conv2d") && r.out().contains("out_dtype=\"int32\""), r.out());
        assertTrue(r.err().contains("kl calibration on 16 inputs"), r.err());
        // mnist8: two convs and a dense, a data and a weight point each; the first conv is skipped unless asked not to
        assertTrue(r.err().contains("4 quantize points"), r.err());
        assertTrue(CliRun.relayc("quantize", model.get().toString(), "--calib-samples", "4").err().contains("4 quantize points"));
        CliRun all = CliRun.relayc("quantize", model.get().toString(), "--calib-samples", "4", "--no-skip-first");
        assertTrue(all.err().contains("6 quantize points"), all.err());
    }
}
