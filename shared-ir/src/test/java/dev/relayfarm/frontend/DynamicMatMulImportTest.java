package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * MatMul over {@code ?} dims: an N-D left side times 2-D weights stays one {@code nn.matmul}; attention's 4-D
 * products merge their two static batch dims with reshape's {@code -3} and split them back with {@code -4}, so both
 * matrix dims may be {@code ?}. Printed Relay, the inferred type, and the interpreter against a plain triple loop.
 */
class DynamicMatMulImportTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;

    @Test
    void attentionScoresWithTwoDynamicDims() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("q", F, 1, 2, "S", 3)).addInput(tensor("k", F, 1, 2, 3, "T"))
                .addNode(node("MatMul", "scores", List.of("q", "k"), List.of("y")))
                .addOutput(tensor("y", F, 1, 2, "S", "T"));
        IRModule m = OnnxImporter.importModel(model(13, g), "attn.onnx", null, ImportOptions.DEFAULT);
        assertEquals("""
                #[version = "0.0.5"]
                def @main(%q: Tensor[(1, 2, ?, 3), float32], %k: Tensor[(1, 2, 3, ?), float32]) {
                  %0 = reshape(%q, newshape=[-3, 0, 0]);
                  %1 = reshape(%k, newshape=[-3, 0, 0]);
                  %2 = nn.batch_matmul(%0, %1, transpose_a=False, transpose_b=False);
                  reshape(%2, newshape=[-4, 1, 2, 0, 0])
                }""", RelayPrinter.print(m).strip());
        assertEquals("fn (Tensor[(1, 2, ?, 3), float32], Tensor[(1, 2, 3, ?), float32]) -> Tensor[(1, 2, ?, ?), float32]",
                RelayPrinter.print(TypeInference.infer(m).typeOf(new GlobalVar("main"))));
        for (int[] st : new int[][] {{4, 5}, {1, 7}}) {
            NDArray q = random(new int[] {1, 2, st[0], 3}, 1), k = random(new int[] {1, 2, 3, st[1]}, 2);
            NDArray y = ((TensorValue) Interpreter.runMain(m, q, k)).data();
            assertArrayEquals(new int[] {1, 2, st[0], st[1]}, y.shape());
            assertArrayEquals(reference(q, k), y.floatData(), 1e-5f);
        }
    }

    @Test
    void nDimensionalTimesWeightsIsOneMatmul() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 1, "W", 4))
                .addInitializer(OnnxTensors.fromNDArray(random(new int[] {4, 3}, 3), "w"))
                .addNode(node("MatMul", "proj", List.of("x", "w"), List.of("y")))
                .addOutput(tensor("y", F, 1, "W", 3));
        IRModule m = OnnxImporter.importModel(model(13, g), "proj.onnx", null, ImportOptions.DEFAULT);
        String text = RelayPrinter.print(m);
        assertTrue(text.contains("nn.matmul(%x, meta[relay.Constant][0])"), text);
        assertEquals("fn (Tensor[(1, ?, 4), float32]) -> Tensor[(1, ?, 3), float32]",
                RelayPrinter.print(TypeInference.infer(m).typeOf(new GlobalVar("main"))));
        NDArray x = random(new int[] {1, 6, 4}, 4);
        assertArrayEquals(new int[] {1, 6, 3}, ((TensorValue) Interpreter.runMain(m, x)).data().shape());
    }

    private static NDArray random(int[] shape, long seed) {
        Random r = new Random(seed);
        double[] v = new double[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < v.length; i++) v[i] = r.nextDouble() * 2 - 1;
        return NDArray.fromDoubles(DType.FLOAT32, shape, v);
    }

    /** {@code q [1, B, S, K] x k [1, B, K, T]}, batch by batch. */
    private static float[] reference(NDArray q, NDArray k) {
        int b = q.dim(1), s = q.dim(2), kk = q.dim(3), t = k.dim(3);
        float[] a = q.floatData(), c = k.floatData(), out = new float[b * s * t];
        for (int h = 0; h < b; h++) {
            for (int i = 0; i < s; i++) {
                for (int j = 0; j < t; j++) {
                    double sum = 0;
                    for (int l = 0; l < kk; l++) sum += a[(h * s + i) * kk + l] * c[(h * kk + l) * t + j];
                    out[(h * s + i) * t + j] = (float) sum;
                }
            }
        }
        return out;
    }
}
