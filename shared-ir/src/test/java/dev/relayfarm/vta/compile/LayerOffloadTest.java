package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.vta.BufferKind;
import dev.relayfarm.vta.ExecutionStats;
import dev.relayfarm.vta.InstructionCodec;
import dev.relayfarm.vta.VtaConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * ResNet-style int8 layers partitioned out of realized Relay, lowered and run on the accelerator SIMULATOR, against
 * the interpreter on the same Relay (the CPU int8 reference), bit for bit, under several schedules.
 */
class LayerOffloadTest {
    private static final VtaConfig CONFIG = VtaConfig.defaults();

    /** Runs {@code module} on the CPU and offloaded with each schedule; asserts equality; returns the offloaded stats. */
    private static List<ExecutionStats> assertBitExact(IRModule module, NDArray input, List<VtaSchedule> schedules) {
        NDArray want = ((TensorValue) Interpreter.runMain(module, input)).data();
        List<ExecutionStats> stats = new java.util.ArrayList<>();
        for (VtaSchedule s : schedules) {
            OffloadedModule off = OffloadedModule.compile(module, CONFIG, layer -> s);
            assertEquals(1, off.lowered().size(), "one offloaded layer");
            // nothing is left on the CPU: the whole function is the vta.layer call on the copied input, copied back
            assertTrue(off.partition().module().main().orElseThrow().body() instanceof Call back && back.callee().equals(Op.get(VtaPartition.DEVICE_COPY))
                    && back.args().getFirst() instanceof Call c && c.callee().equals(Op.get(VtaPartition.OP))
                    && c.args().getFirst() instanceof Call in && in.callee().equals(Op.get(VtaPartition.DEVICE_COPY)), "whole layer offloaded");
            OffloadedModule.Result r = off.run(input);
            NDArray got = ((TensorValue) r.value()).data();
            assertEquals(want.dtype(), got.dtype());
            assertTrue(got.contentEquals(want), "schedule " + s + ": accelerator output differs from the CPU int8 result");
            LoweredLayer lowered = off.lowered().get(0);
            // the stream survives its 128-bit encoding, as an artifact would carry it
            assertEquals(lowered.program(), lowered.encoded().stream().map(InstructionCodec::decode).toList());
            ExecutionStats st = r.calls().get(0).stats();
            assertEquals(Map.of(), st.leftoverTokens(), "balanced tokens under " + s);
            stats.add(st);
        }
        return stats;
    }

    @Test
    void conv3x3Stride1Pad1From3To16Channels() {
        IRModule m = QuantizedRelay.conv(1, 3, 16, 16, 16, 3, 1, 1, DType.INT8, true, false, 1e-3, 2e-2);
        List<ExecutionStats> stats = assertBitExact(m, QuantizedRelay.input(11, DType.INT8, 1, 3, 16, 16),
                List.of(new VtaSchedule(16, 1, 2), new VtaSchedule(3, 1, 1), new VtaSchedule(1, 1, 2)));
        // one 16×16 GEMM per output pixel per 3×3 tap (3 channels pad to one block), plus one reset step per pixel
        assertEquals(16 * 16 * 9 + 16 * 16, stats.get(0).gemmOps());
        assertEquals(16 * 16 * 9 + 16 * 16, stats.get(1).gemmOps());
    }

    @Test
    void conv3x3At14x14With64ChannelsAndUint8Output() {
        IRModule m = QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3);
        assertBitExact(m, QuantizedRelay.input(12, DType.INT8, 1, 64, 14, 14),
                List.of(new VtaSchedule(7, 4, 1), new VtaSchedule(7, 2, 2), new VtaSchedule(2, 4, 2), new VtaSchedule(5, 3, 2)));
    }

    @Test
    void conv3x3Stride2From64To128ChannelsWithUint8Input() {
        IRModule m = QuantizedRelay.conv(3, 64, 14, 14, 128, 3, 2, 1, DType.UINT8, false, false, 1e-4, 5e-3);
        assertBitExact(m, QuantizedRelay.input(13, DType.UINT8, 1, 64, 14, 14),
                List.of(new VtaSchedule(7, 8, 1), new VtaSchedule(2, 2, 2), new VtaSchedule(3, 5, 2),
                        // the reduction over the 8 (uint8-doubled) input blocks in steps of 1 and of 3 (3 + 3 + 2)
                        new VtaSchedule(7, 4, 1, 2), new VtaSchedule(3, 2, 3, 1)));
    }

    @Test
    void aLayerWhoseInputRowsExceedTheInputBufferAccumulatesOverReductionSteps() {
        // 128 uint8 channels = 16 blocks × 3 input rows × 45 padded columns = 2160 entries > the 2048 of the INP buffer
        IRModule m = QuantizedRelay.conv(8, 128, 44, 44, 32, 3, 2, 1, DType.UINT8, false, false, 1e-4, 5e-3);
        QuantizedLayer layer = VtaPartition.partition(m).layers().get(0);
        assertThrows(BufferCapacityException.class, () -> LayerLowering.checkFits(layer, new VtaSchedule(1, 1, 1), CONFIG));
        VtaSchedule chosen = VtaScheduleSpace.defaultSchedule(layer, CONFIG);
        assertTrue(chosen.tileCiBlocks() < 16, "the default splits the reduction: " + chosen);
        assertBitExact(m, QuantizedRelay.input(18, DType.UINT8, 1, 128, 44, 44), List.of(chosen, new VtaSchedule(2, 1, 3, 2)));
    }

    @Test
    void conv1x1With20ChannelsAndMultipliersAboveOne() {
        // 20 → 24 channels: neither a multiple of 16; multipliers up to 4 exercise the part of m0 above the shift
        IRModule m = QuantizedRelay.conv(4, 20, 9, 9, 24, 1, 1, 0, DType.INT8, false, false, 0.5, 4.0);
        assertBitExact(m, QuantizedRelay.input(14, DType.INT8, 1, 20, 9, 9), List.of(new VtaSchedule(9, 2, 2), new VtaSchedule(4, 1, 1)));
    }

    @Test
    void denseRequantizedAndDenseWithInt32Output() {
        assertBitExact(QuantizedRelay.dense(5, 4, 100, 40, true, 1e-4, 1e-2), QuantizedRelay.input(15, DType.INT8, 4, 100),
                List.of(new VtaSchedule(4, 3, 2), new VtaSchedule(1, 1, 2)));
        // the int32 accumulator + bias leaves the accelerator as four byte planes
        assertBitExact(QuantizedRelay.dense(6, 1, 256, 10, false, 1, 1), QuantizedRelay.input(16, DType.INT8, 1, 256),
                List.of(new VtaSchedule(1, 1, 1), new VtaSchedule(1, 1, 2)));
    }

    @Test
    void aRequantizeTheAluCannotDoExactlyStaysOnTheCpu() {
        // multipliers near 2^-25 have no exact 32-bit plan: the accelerator returns the int32 accumulator + bias
        IRModule m = QuantizedRelay.conv(7, 16, 8, 8, 16, 3, 1, 1, DType.INT8, false, false, 3e-8, 4e-8);
        OffloadedModule off = OffloadedModule.compile(m, CONFIG, l -> VtaScheduleSpace.defaultSchedule(l, CONFIG));
        QuantizedLayer layer = off.lowered().get(0).layer();
        assertEquals(DType.INT32, layer.outputDtype());
        assertEquals(List.of(EpilogueOp.BiasAdd.class), layer.epilogue().stream().map(Object::getClass).toList());
        NDArray x = QuantizedRelay.input(17, DType.INT8, 1, 16, 8, 8);
        NDArray want = ((TensorValue) Interpreter.runMain(m, x)).data();
        assertTrue(((TensorValue) off.run(x).value()).data().contentEquals(want));
    }

    @Test
    void aScheduleThatDoesNotFitIsRejectedNamingTheBuffer() {
        QuantizedLayer layer = VtaPartition.partition(QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3))
                .layers().get(0);
        // 14 rows × 4 blocks × 14 columns = 784 accumulator entries per region, at least two regions (requantize), two halves
        BufferCapacityException acc = assertThrows(BufferCapacityException.class, () -> LayerLowering.lower(layer, new VtaSchedule(14, 4, 2), CONFIG));
        assertEquals(BufferKind.ACC, acc.buffer());
        assertTrue(acc.getMessage().contains("the ACC buffer would need"), acc.getMessage());
        QuantizedLayer wide = VtaPartition.partition(QuantizedRelay.conv(3, 256, 14, 14, 16, 3, 1, 1, DType.UINT8, false, false, 1e-4, 5e-3))
                .layers().get(0);
        BufferCapacityException inp = assertThrows(BufferCapacityException.class, () -> LayerLowering.lower(wide, new VtaSchedule(14, 1, 1), CONFIG));
        assertEquals(BufferKind.INP, inp.buffer());
        assertTrue(inp.getMessage().contains("the INP buffer would need"), inp.getMessage());
    }
}
