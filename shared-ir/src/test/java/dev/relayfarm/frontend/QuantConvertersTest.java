package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto.DataType;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Quantization converters against hand-computed values: half-to-even rounding, saturation, per-axis and blocked parameters. */
class QuantConvertersTest {
    private static final int F = DataType.FLOAT_VALUE;

    private static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    private static NDArray run(IRModule m, NDArray... in) {
        return ((TensorValue) Interpreter.runMain(m, in)).data();
    }

    @Test
    void quantizeLinearRoundsHalfToEvenAndSaturates() {
        NDArray zp = NDArray.fromLongs(DType.INT8, new int[0], new long[] {1});
        GraphProto.Builder g = GraphProto.newBuilder().setName("q")
                .addInput(tensor("x", F, 8))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[0], new double[] {0.5}), "s"))
                .addInitializer(OnnxTensors.fromNDArray(zp, "zp"))
                .addNode(node("QuantizeLinear", "q", List.of("x", "s", "zp"), List.of("y")))
                .addOutput(tensor("y", DataType.INT8_VALUE, 8));
        IRModule m = OnnxImporter.importModel(model(13, g), "q.onnx", null, ImportOptions.DEFAULT);
        // x / 0.5 = 0.5, 1.5, 2.5, -0.5, -1.5, -2.5 round to 0, 2, 2, -0, -2, -2 (Relay's round would give 1, 2, 3, ...).
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {8}, new double[] {0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 100, -100});
        NDArray y = run(m, x);
        assertEquals(DType.INT8, y.dtype());
        assertArrayEquals(new byte[] {1, 3, 3, 1, -1, -1, 127, -128}, y.byteData());
    }

    @Test
    void dequantizeLinearPerAxisAndBlocked() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("dq")
                .addInput(tensor("x", DataType.UINT8_VALUE, 2, 4))
                .addInput(tensor("s", F, 2))
                .addInput(tensor("zp", DataType.UINT8_VALUE, 2))
                .addNode(node("DequantizeLinear", "dq", List.of("x", "s", "zp"), List.of("y"), intAttr("axis", 0)))
                .addOutput(tensor("y", F, 2, 4));
        IRModule m = OnnxImporter.importModel(model(13, g), "dq.onnx", null, ImportOptions.DEFAULT);
        NDArray x = NDArray.fromLongs(DType.UINT8, new int[] {2, 4}, new long[] {0, 10, 255, 128, 0, 10, 255, 128});
        NDArray y = run(m, x, NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {2, 0.5}),
                NDArray.fromLongs(DType.UINT8, new int[] {2}, new long[] {10, 128}));
        assertArrayEquals(new float[] {-20, 0, 490, 236, -64, -59, 63.5f, 0}, y.floatData());

        // Blocked along axis 1 with block_size 3: 4 columns -> 2 blocks, the second cut to one column.
        GraphProto.Builder gb = GraphProto.newBuilder().setName("dqb")
                .addInput(tensor("x", DataType.INT8_VALUE, 1, 4))
                .addInput(tensor("s", F, 1, 2))
                .addNode(node("DequantizeLinear", "dq", List.of("x", "s"), List.of("y"), intAttr("axis", 1), intAttr("block_size", 3)))
                .addOutput(tensor("y", F, 1, 4));
        IRModule mb = OnnxImporter.importModel(model(21, gb), "dqb.onnx", null, ImportOptions.DEFAULT);
        NDArray yb = run(mb, NDArray.fromLongs(DType.INT8, new int[] {1, 4}, new long[] {1, -2, 3, 4}),
                NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 2}, new double[] {10, 100}));
        assertArrayEquals(new float[] {10, -20, 30, 400}, yb.floatData());
    }

    @Test
    void dynamicQuantizeLinearAndQLinearMatMul() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("dyn")
                .addInput(tensor("x", F, 4))
                .addNode(node("DynamicQuantizeLinear", "d", List.of("x"), List.of("y", "s", "zp")))
                .addOutput(tensor("y", DataType.UINT8_VALUE, 4)).addOutput(tensor("s", F)).addOutput(tensor("zp", DataType.UINT8_VALUE));
        IRModule m = OnnxImporter.importModel(model(11, g), "dyn.onnx", null, ImportOptions.DEFAULT);
        // Range [-1, 4]: scale 5/255, zero point rint(255/5) = 51.
        TupleValue out = (TupleValue) Interpreter.runMain(m, NDArray.fromDoubles(DType.FLOAT32, new int[] {4}, new double[] {-1, 0, 2, 4}));
        assertEquals(5 / 255.0, ((TensorValue) out.fields().get(1)).data().getDouble(0), 1e-7);
        assertEquals(51, ((TensorValue) out.fields().get(2)).data().getLong(0));
        NDArray y = ((TensorValue) out.fields().get(0)).data();
        assertEquals(List.of(0L, 51L, 153L, 255L), List.of(y.getLong(0), y.getLong(1), y.getLong(2), y.getLong(3)));

        // QLinearMatMul: rint(((a - 1) . (b - 0)) * (0.5 * 1 / 2)) + 3 with a = [[3, 5]], b = [[1], [2]]: rint(10 / 4 = 2.5) = 2, + 3 = 5.
        // (Rounding after adding the zero point would give rint(5.5) = 6.)
        GraphProto.Builder q = GraphProto.newBuilder().setName("qmm")
                .addInput(tensor("a", DataType.UINT8_VALUE, 1, 2))
                .addInput(tensor("b", DataType.UINT8_VALUE, 2, 1))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(0.5f), "as"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.UINT8, new int[0], new long[] {1}), "az"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(1f), "bs"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.UINT8, new int[0], new long[] {0}), "bz"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(2f), "ys"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.UINT8, new int[0], new long[] {3}), "yz"))
                .addNode(node("QLinearMatMul", "mm", List.of("a", "as", "az", "b", "bs", "bz", "ys", "yz"), List.of("y")))
                .addOutput(tensor("y", DataType.UINT8_VALUE, 1, 1));
        IRModule mq = OnnxImporter.importModel(model(10, q), "qmm.onnx", null, ImportOptions.DEFAULT);
        NDArray r = run(mq, NDArray.fromLongs(DType.UINT8, new int[] {1, 2}, new long[] {3, 5}),
                NDArray.fromLongs(DType.UINT8, new int[] {2, 1}, new long[] {1, 2}));
        assertEquals(5, r.getLong(0));
    }
}
