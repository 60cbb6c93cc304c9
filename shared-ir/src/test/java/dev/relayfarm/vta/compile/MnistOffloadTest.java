package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.vta.VtaConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The quantized mnist8 (ONNX model zoo mnist-8 from {@code ../shared/onnx/models}; skipped without it), calibrated on
 * 16 seeded uniform-noise inputs, with its int8 conv2d / dense layers on the accelerator SIMULATOR and the rest
 * (input quantize, max-pool, reshape, dequantize) in the interpreter: the output equals the all-CPU int8 result
 * bit for bit.
 */
class MnistOffloadTest {
    static Optional<IRModule> model() {
        Optional<Path> dir = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk")).filter(Files::isDirectory);
        return dir.map(d -> {
            try {
                return Stages.inferTypes(Stages.importModel(ModelSource.read(d.resolve("model.onnx")), ""));
            } catch (Exception e) {
                throw new IllegalStateException("cannot import " + d, e);
            }
        });
    }

    static NDArray noise(long seed) {
        Random r = new Random(seed);
        float[] v = new float[28 * 28];
        for (int i = 0; i < v.length; i++) v[i] = r.nextFloat();
        return NDArray.wrap(DType.FLOAT32, new int[] {1, 1, 28, 28}, v);
    }

    /** mnist8 realized with every conv int8 ({@code allLayers}) or the first conv left float (the default). */
    static IRModule quantized(IRModule model, boolean allLayers) {
        List<List<NDArray>> calibration = new ArrayList<>();
        for (long s = 0; s < 16; s++) calibration.add(List.of(noise(s)));
        QuantizeConfig cfg = allLayers ? QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()) : QuantizeConfig.DEFAULT;
        return Quantizer.quantize(model, calibration, cfg).module();
    }

    /**
     * Copies go where a value changes device, once per value and direction: a layer reading a layer's result reads
     * it in place, two readers on the CPU share one copy back.
     */
    @Test
    void deviceCopiesSitWhereValuesChangeDevice() {
        dev.relayfarm.ir.Var x = dev.relayfarm.ir.Var.fresh("x", new dev.relayfarm.ir.TensorType(List.of(dev.relayfarm.ir.Dim.of(4)), dev.relayfarm.ir.DType.INT8));
        dev.relayfarm.ir.Call l0 = layer(x, 0), l1 = layer(l0, 1);
        dev.relayfarm.ir.Expr body = VtaPartition.placeCopies(dev.relayfarm.ir.Call.op("add", l1, l1));
        dev.relayfarm.ir.Call add = (dev.relayfarm.ir.Call) body;
        dev.relayfarm.ir.Call back = (dev.relayfarm.ir.Call) add.args().get(0);
        assertTrue(back == add.args().get(1), "one copy back for both readers");
        assertEquals(VtaPartition.DEVICE_COPY, ((dev.relayfarm.ir.Op) back.callee()).name());
        assertEquals(java.util.Optional.of(dev.relayfarm.ir.AttrValue.of(VtaPartition.ACCELERATOR)), back.attrs().get("src_device"));
        dev.relayfarm.ir.Call second = (dev.relayfarm.ir.Call) back.args().get(0), first = (dev.relayfarm.ir.Call) second.args().get(0);
        assertTrue(VtaPartition.isLayer(second) && VtaPartition.isLayer(first), "the second layer reads the first's result in place");
        dev.relayfarm.ir.Call in = (dev.relayfarm.ir.Call) first.args().get(0);
        assertEquals(VtaPartition.DEVICE_COPY, ((dev.relayfarm.ir.Op) in.callee()).name());
        assertTrue(in.args().get(0) == x);
        // a layer as the function's result is copied back too
        dev.relayfarm.ir.Expr alone = VtaPartition.placeCopies(layer(x, 0));
        assertEquals(VtaPartition.DEVICE_COPY, ((dev.relayfarm.ir.Op) ((dev.relayfarm.ir.Call) alone).callee()).name());
    }

    private static dev.relayfarm.ir.Call layer(dev.relayfarm.ir.Expr input, int i) {
        return new dev.relayfarm.ir.Call(dev.relayfarm.ir.Op.get(VtaPartition.OP), List.of(input),
                dev.relayfarm.ir.Attrs.of("layer", dev.relayfarm.ir.AttrValue.of(i)));
    }

    @Test
    void offloadedMnist8EqualsTheCpuInt8ResultBitForBit() {
        Optional<IRModule> model = model();
        assumeTrue(model.isPresent(), "../shared/onnx/models/mnist8_cntk is absent: skipped");
        for (boolean allLayers : new boolean[] {true, false}) {
            IRModule q = quantized(model.get(), allLayers);
            OffloadedModule off = OffloadedModule.compile(q, VtaConfig.defaults(), l -> VtaScheduleSpace.defaultSchedule(l, VtaConfig.defaults()));
            // all layers: conv 1→8 (uint8 out), conv 8→16 (uint8 in and out), dense 256→10 (int32 out); else the second conv and the dense
            List<String> names = off.lowered().stream().map(l -> l.layer().name()).toList();
            assertEquals(allLayers ? List.of("conv2d#0", "conv2d#1", "dense#0") : List.of("conv2d#1", "dense#0"), names);
            for (long seed = 100; seed < 104; seed++) {
                NDArray x = noise(seed);
                NDArray want = ((TensorValue) Interpreter.runMain(q, x)).data();
                OffloadedModule.Result r = off.run(x);
                assertEquals(names.size(), r.calls().size(), "every offloaded layer ran on the simulator");
                assertTrue(((TensorValue) r.value()).data().contentEquals(want), "input " + seed + " (all layers " + allLayers + "): offloaded != CPU int8");
                // every layer reads a value the CPU made (a max-pool or reshape lies between them): each input is copied
                // over, and each result back: the convs' uint8 maps (8x28x28, 16x14x14) and the dense's 10 int32 logits
                long in = r.calls().stream().mapToLong(c -> c.input().elementCount() * (long) c.input().dtype().storageBytes()).sum();
                assertEquals(in, r.bytesToAccelerator());
                assertEquals((allLayers ? 8 * 28 * 28 : 0) + 16 * 14 * 14 + 10 * 4, r.bytesToHost(), "results copied back");
            }
            long copies = dev.relayfarm.ir.ExprTraversal.postOrder(off.partition().module().main().orElseThrow().body()).stream()
                    .filter(e -> e instanceof dev.relayfarm.ir.Call c && c.callee() instanceof dev.relayfarm.ir.Op op && op.name().equals(VtaPartition.DEVICE_COPY)).count();
            assertEquals(2L * names.size(), copies, "one copy in and one out per layer");
        }
    }
}
