package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.Random;
import org.junit.jupiter.api.Test;

/** DFT (against a naive complex DFT), the real inverse, windows, and an RNN against a hand-run recurrence. */
class SignalRecurrentConvertersTest {
    private static final int F = DataType.FLOAT_VALUE;

    private static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    private static AttributeProto strAttr(String name, String v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRING)
                .setS(com.google.protobuf.ByteString.copyFromUtf8(v)).build();
    }

    @Test
    void complexDftAlongAxisOneMatchesNaiveSumAndInverseRoundTrips() {
        int l = 5;
        GraphProto.Builder g = GraphProto.newBuilder().setName("dft")
                .addInput(tensor("x", F, 2, l, 2))
                .addNode(node("DFT", "f", List.of("x"), List.of("y"), intAttr("axis", 1)))
                .addNode(node("DFT", "i", List.of("y"), List.of("z"), intAttr("axis", 1), intAttr("inverse", 1)))
                .addOutput(tensor("y", F, 2, l, 2)).addOutput(tensor("z", F, 2, l, 2));
        IRModule m = OnnxImporter.importModel(model(17, g), "dft.onnx", null, ImportOptions.DEFAULT);
        Random rnd = new Random(7);
        double[] xv = new double[2 * l * 2];
        for (int i = 0; i < xv.length; i++) xv[i] = rnd.nextInt(9) - 4;
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, l, 2}, xv);
        TupleValue out = (TupleValue) Interpreter.runMain(m, x);
        NDArray y = ((TensorValue) out.fields().get(0)).data();
        for (int b = 0; b < 2; b++) {
            for (int k = 0; k < l; k++) {
                double re = 0, im = 0;
                for (int t = 0; t < l; t++) {
                    double xr = xv[(b * l + t) * 2], xi = xv[(b * l + t) * 2 + 1], th = -2 * Math.PI * k * t / l;
                    re += xr * Math.cos(th) - xi * Math.sin(th);
                    im += xr * Math.sin(th) + xi * Math.cos(th);
                }
                assertEquals(re, y.getDouble((b * l + k) * 2), 1e-4);
                assertEquals(im, y.getDouble((b * l + k) * 2 + 1), 1e-4);
            }
        }
        NDArray z = ((TensorValue) out.fields().get(1)).data();
        for (int i = 0; i < xv.length; i++) assertEquals(xv[i], z.getDouble(i), 1e-4);
    }

    @Test
    void onesidedForwardThenInverseOnesidedRecoversTheRealSignal() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("rfft")
                .addInput(tensor("x", F, 1, 6, 1))
                .addNode(node("DFT", "f", List.of("x"), List.of("y"), intAttr("axis", 1), intAttr("onesided", 1)))
                .addNode(node("DFT", "i", List.of("y"), List.of("z"), intAttr("axis", 1), intAttr("onesided", 1), intAttr("inverse", 1)))
                .addOutput(tensor("y", F, 1, 4, 2)).addOutput(tensor("z", F, 1, 6, 1));
        IRModule m = OnnxImporter.importModel(model(17, g), "rfft.onnx", null, ImportOptions.DEFAULT);
        double[] xv = {3, -1, 4, 1, -5, 9};
        TupleValue out = (TupleValue) Interpreter.runMain(m, NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 6, 1}, xv));
        NDArray y = ((TensorValue) out.fields().get(0)).data();
        assertArrayEquals(new int[] {1, 4, 2}, y.shape());
        assertEquals(11, y.getDouble(0), 1e-5); // bin 0: the sum
        double nyquist = 0; // bin 3 of 6 is the alternating sum
        for (int t = 0; t < 6; t++) nyquist += xv[t] * (t % 2 == 0 ? 1 : -1);
        assertEquals(nyquist, y.getDouble(6), 1e-4);
        NDArray z = ((TensorValue) out.fields().get(1)).data();
        for (int t = 0; t < 6; t++) assertEquals(xv[t], z.getDouble(t), 1e-4);
    }

    @Test
    void hannWindowPeriodicAndSymmetric() {
        NDArray size = NDArray.fromLongs(DType.INT64, new int[0], new long[] {4});
        GraphProto.Builder g = GraphProto.newBuilder().setName("w")
                .addInitializer(OnnxTensors.fromNDArray(size, "n"))
                .addNode(node("HannWindow", "p", List.of("n"), List.of("p")))
                .addNode(node("HannWindow", "s", List.of("n"), List.of("s"), intAttr("periodic", 0)))
                .addOutput(tensor("p", F, 4)).addOutput(tensor("s", F, 4));
        IRModule m = OnnxImporter.importModel(model(17, g), "w.onnx", null, ImportOptions.DEFAULT);
        TupleValue out = (TupleValue) Interpreter.runMain(m);
        assertArrayEquals(new float[] {0, 0.5f, 1, 0.5f}, ((TensorValue) out.fields().get(0)).data().floatData(), 1e-6f);
        assertArrayEquals(new float[] {0, 0.75f, 0.75f, 0}, ((TensorValue) out.fields().get(1)).data().floatData(), 1e-6f);
    }

    /** A 1-unit reverse RNN with sequence_lens: h_t = tanh(w x_t + r h_{t-1} + b), entries past their length keep h and emit 0. */
    @Test
    void reverseRnnWithSequenceLengthsMatchesAHandRunRecurrence() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("rnn")
                .addInput(tensor("x", F, 3, 2, 1))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 1, 1}, new double[] {0.5}), "W"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 1, 1}, new double[] {-0.3}), "R"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 2}, new double[] {0.1, 0.05}), "B"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT32, new int[] {2}, new long[] {3, 2}), "L"))
                .addNode(node("RNN", "rnn", List.of("x", "W", "R", "B", "L"), List.of("y", "h"), intAttr("hidden_size", 1), strAttr("direction", "reverse")))
                .addOutput(tensor("y", F, 3, 1, 2, 1)).addOutput(tensor("h", F, 1, 2, 1));
        IRModule m = OnnxImporter.importModel(model(14, g), "rnn.onnx", null, ImportOptions.DEFAULT);
        double[] xv = {1, 2, -1, 0.5, 3, 7}; // [t][batch]
        TupleValue out = (TupleValue) Interpreter.runMain(m, NDArray.fromDoubles(DType.FLOAT32, new int[] {3, 2, 1}, xv));
        NDArray y = ((TensorValue) out.fields().get(0)).data();
        NDArray h = ((TensorValue) out.fields().get(1)).data();
        int[] lens = {3, 2};
        for (int b = 0; b < 2; b++) {
            double state = 0;
            double[] ys = new double[3];
            for (int t = lens[b] - 1; t >= 0; t--) {
                state = Math.tanh(0.5 * xv[t * 2 + b] - 0.3 * state + 0.15);
                ys[t] = state;
            }
            for (int t = 0; t < 3; t++) assertEquals(ys[t], y.getDouble(t * 2 + b), 1e-6, "y[" + t + "][" + b + "]");
            assertEquals(state, h.getDouble(b), 1e-6);
        }
    }

    @Test
    void reverseSequenceReversesEachBatchEntryUpToItsLength() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("rs")
                .addInput(tensor("x", F, 2, 4))
                .addInput(tensor("l", DataType.INT64_VALUE, 2))
                .addNode(node("ReverseSequence", "rs", List.of("x", "l"), List.of("y"), intAttr("batch_axis", 0), intAttr("time_axis", 1)))
                .addOutput(tensor("y", F, 2, 4));
        IRModule m = OnnxImporter.importModel(model(10, g), "rs.onnx", null, ImportOptions.DEFAULT);
        NDArray y = ((TensorValue) Interpreter.runMain(m, NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 4}, new double[] {1, 2, 3, 4, 5, 6, 7, 8}),
                NDArray.fromLongs(DType.INT64, new int[] {2}, new long[] {3, 1}))).data();
        assertArrayEquals(new float[] {3, 2, 1, 4, 5, 6, 7, 8}, y.floatData());
    }

    @Test
    void affineGrid2dIsBaseGridTimesTheta() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("ag")
                .addInput(tensor("theta", F, 1, 2, 3))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT64, new int[] {4}, new long[] {1, 1, 2, 3}), "size"))
                .addNode(node("AffineGrid", "ag", List.of("theta", "size"), List.of("grid"), intAttr("align_corners", 1)))
                .addOutput(tensor("grid", F, 1, 2, 3, 2));
        IRModule m = OnnxImporter.importModel(model(20, g), "ag.onnx", null, ImportOptions.DEFAULT);
        // theta: x' = 2x + 1, y' = -y; aligned corners: x in {-1, 0, 1}, y in {-1, 1}.
        NDArray grid = ((TensorValue) Interpreter.runMain(m, NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 2, 3}, new double[] {2, 0, 1, 0, -1, 0}))).data();
        assertArrayEquals(new float[] {-1, 1, 1, 1, 3, 1, -1, -1, 1, -1, 3, -1}, grid.floatData(), 1e-6f);
    }
}
