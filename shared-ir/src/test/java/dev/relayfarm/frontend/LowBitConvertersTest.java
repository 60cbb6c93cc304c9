package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto.DataType;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The low-bit element types through the ONNX frontend: packed tensors, Cast/CastLike attributes, Q/DQ ranges. */
class LowBitConvertersTest {
    private static final int F = DataType.FLOAT_VALUE;

    private static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    private static AttributeProto strAttr(String name, String v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRING).setS(ByteString.copyFromUtf8(v)).build();
    }

    private static NDArray run(IRModule m, NDArray... in) {
        return ((TensorValue) Interpreter.runMain(m, in)).data();
    }

    private static IRModule castModel(int to, int n, AttributeProto... extra) {
        AttributeProto[] attrs = new AttributeProto[extra.length + 1];
        attrs[0] = intAttr("to", to);
        System.arraycopy(extra, 0, attrs, 1, extra.length);
        GraphProto.Builder g = GraphProto.newBuilder().setName("c").addInput(tensor("x", F, n))
                .addNode(node("Cast", "c", List.of("x"), List.of("y"), attrs)).addOutput(tensor("y", to, n));
        return OnnxImporter.importModel(model(24, g), "c.onnx", null, ImportOptions.DEFAULT);
    }

    private static int[] codes(NDArray a) {
        int[] c = new int[a.elementCount()];
        for (int i = 0; i < c.length; i++) c[i] = a.byteData()[i] & 0xff;
        return c;
    }

    @Test
    void packedSubByteTensorsUnpackLowBitsFirstAndPackBack() {
        // ONNX test_cast_FLOAT_to_INT4's output: -9..15 wrapped to int4, two per byte, low nibble first
        byte[] raw = {(byte) 0x87, (byte) 0xa9, (byte) 0xcb, (byte) 0xed, 0x0f, 0x21, 0x03};
        TensorProto t = TensorProto.newBuilder().setDataType(DataType.INT4_VALUE).addDims(13).setRawData(ByteString.copyFrom(raw)).build();
        NDArray a = OnnxTensors.toNDArray(t, null, "t");
        assertEquals(DType.INT4, a.dtype());
        assertArrayEquals(new byte[] {7, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3}, a.byteData());
        assertArrayEquals(raw, OnnxTensors.fromNDArray(a, "t").getRawData().toByteArray());
        // uint2 in int32_data: one packed byte per int32 (0x39 = elements 1, 2, 3, 0)
        TensorProto u = TensorProto.newBuilder().setDataType(DataType.UINT2_VALUE).addDims(6).addInt32Data(0x39).addInt32Data(0x0e).build();
        assertArrayEquals(new byte[] {1, 2, 3, 0, 2, 3}, OnnxTensors.toNDArray(u, null, "u").byteData());
        // float8 codes stay as they are, one per byte
        TensorProto f8 = TensorProto.newBuilder().setDataType(DataType.FLOAT8E5M2_VALUE).addDims(2).setRawData(ByteString.copyFrom(new byte[] {0x3c, (byte) 0xfc})).build();
        NDArray b = OnnxTensors.toNDArray(f8, null, "f8");
        assertEquals(DType.FLOAT8_E5M2, b.dtype());
        assertEquals(1.0, b.getDouble(0));
        assertEquals(Double.NEGATIVE_INFINITY, b.getDouble(1));
        TensorProto bad = TensorProto.newBuilder().setDataType(DataType.FLOAT4E2M1_VALUE).addDims(5).setRawData(ByteString.copyFrom(new byte[2])).build();
        assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(bad, null, "bad"));
    }

    @Test
    void castSaturatesFloat8ByDefaultAndNotWhenAsked() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {4}, new double[] {1e6, Double.NEGATIVE_INFINITY, Double.NaN, -1e-7});
        assertArrayEquals(new int[] {0x7e, 0xfe, 0x7f, 0x80}, codes(run(castModel(DataType.FLOAT8E4M3FN_VALUE, 4), x)));
        assertArrayEquals(new int[] {0x7f, 0xff, 0x7f, 0x80}, codes(run(castModel(DataType.FLOAT8E4M3FN_VALUE, 4, intAttr("saturate", 0)), x)));
        assertArrayEquals(new int[] {0x7b, 0xfb, 0x7e, 0x80}, codes(run(castModel(DataType.FLOAT8E5M2_VALUE, 4), x)));
        assertArrayEquals(new int[] {0x7c, 0xfc, 0x7e, 0x80}, codes(run(castModel(DataType.FLOAT8E5M2_VALUE, 4, intAttr("saturate", 0)), x)));
        assertArrayEquals(new int[] {0x80, 0x80, 0x80, 0x00}, codes(run(castModel(DataType.FLOAT8E4M3FNUZ_VALUE, 4, intAttr("saturate", 0)), x)));
        assertArrayEquals(new int[] {0x7, 0xf, 0x8, 0x8}, codes(run(castModel(DataType.FLOAT4E2M1_VALUE, 4, intAttr("saturate", 0)), x)));
    }

    @Test
    void castToE8M0FollowsRoundMode() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {1.1, 1.5, 0.124});
        assertArrayEquals(new int[] {0x80, 0x80, 0x7c}, codes(run(castModel(DataType.FLOAT8E8M0_VALUE, 3), x)));
        assertArrayEquals(new int[] {0x7f, 0x7f, 0x7b}, codes(run(castModel(DataType.FLOAT8E8M0_VALUE, 3, strAttr("round_mode", "down")), x)));
        assertArrayEquals(new int[] {0x7f, 0x80, 0x7c}, codes(run(castModel(DataType.FLOAT8E8M0_VALUE, 3, strAttr("round_mode", "nearest")), x)));
        var e = assertThrows(OnnxFormatException.class, () -> castModel(DataType.FLOAT8E8M0_VALUE, 3, strAttr("round_mode", "sideways")));
        assertTrue(e.getMessage().contains("round_mode"), e.getMessage());
    }

    @Test
    void castToInt4AndInt2Wraps() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {5}, new double[] {-9, 8, 15, 2.7, -3});
        assertArrayEquals(new byte[] {7, -8, -1, 2, -3}, run(castModel(DataType.INT4_VALUE, 5), x).byteData());
        assertArrayEquals(new byte[] {7, 8, 15, 2, 13}, run(castModel(DataType.UINT4_VALUE, 5), x).byteData());
        assertArrayEquals(new byte[] {-1, 0, -1, -2, 1}, run(castModel(DataType.INT2_VALUE, 5), x).byteData());
        assertArrayEquals(new byte[] {3, 0, 3, 2, 1}, run(castModel(DataType.UINT2_VALUE, 5), x).byteData());
    }

    private static IRModule quantizeModel(int q, int n, AttributeProto... attrs) {
        GraphProto.Builder g = GraphProto.newBuilder().setName("q").addInput(tensor("x", F, n))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[0], new double[] {0.5}), "s"))
                .addNode(node("QuantizeLinear", "q", List.of("x", "s"), List.of("y"), java.util.stream.Stream.concat(
                        java.util.stream.Stream.of(intAttr("output_dtype", q)), java.util.Arrays.stream(attrs)).toArray(AttributeProto[]::new)))
                .addOutput(tensor("y", q, n));
        return OnnxImporter.importModel(model(21, g), "q.onnx", null, ImportOptions.DEFAULT);
    }

    @Test
    void quantizeLinearClampsToLowBitRangesAndSaturatesFloat8() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {4}, new double[] {-100, -0.75, 1.25, 100});
        // x / 0.5 = -200, -1.5, 2.5, 200: half to even, clamped (float4: 2.5 is halfway between 2 and 3, even is 2)
        assertArrayEquals(new byte[] {-8, -2, 2, 7}, run(quantizeModel(DataType.INT4_VALUE, 4), x).byteData());
        assertArrayEquals(new byte[] {0, 0, 2, 15}, run(quantizeModel(DataType.UINT4_VALUE, 4), x).byteData());
        assertArrayEquals(new byte[] {-2, -2, 1, 1}, run(quantizeModel(DataType.INT2_VALUE, 4), x).byteData());
        assertArrayEquals(new byte[] {0, 0, 2, 3}, run(quantizeModel(DataType.UINT2_VALUE, 4), x).byteData());
        NDArray big = NDArray.fromDoubles(DType.FLOAT32, new int[] {4}, new double[] {-1000, -0.75, 1.25, 1000});
        assertArrayEquals(new int[] {0xfe, 0xbc, 0x42, 0x7e}, codes(run(quantizeModel(DataType.FLOAT8E4M3FN_VALUE, 4), big)));
        assertArrayEquals(new int[] {0xff, 0xbc, 0x42, 0x7f}, codes(run(quantizeModel(DataType.FLOAT8E4M3FN_VALUE, 4, intAttr("saturate", 0)), big)));
        assertArrayEquals(new int[] {0xf, 0xb, 0x4, 0x7}, codes(run(quantizeModel(DataType.FLOAT4E2M1_VALUE, 4), big)));
        assertThrows(OnnxFormatException.class, () -> quantizeModel(DataType.FLOAT8E8M0_VALUE, 4));
    }

    @Test
    void dequantizeLinearReadsFloat8AndInt4() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("dq").addInput(tensor("x", DataType.INT4_VALUE, 3))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[0], new double[] {2}), "s"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT4, new int[0], new long[] {-1}), "zp"))
                .addNode(node("DequantizeLinear", "dq", List.of("x", "s", "zp"), List.of("y")))
                .addOutput(tensor("y", F, 3));
        IRModule m = OnnxImporter.importModel(model(21, g), "dq.onnx", null, ImportOptions.DEFAULT);
        NDArray y = run(m, NDArray.fromLongs(DType.INT4, new int[] {3}, new long[] {-8, 0, 7}));
        assertArrayEquals(new float[] {-14, 2, 16}, y.floatData());
    }

    @Test
    void textAndJsonRoundTripTheNamesAndConstants() {
        String src = "fn (%x: Tensor[(3), float8_e4m3fn], %q: Tensor[(3), int4]) { (cast(%x, dtype=\"float8_e5m2\", saturate=True), "
                + "cast(%x, dtype=\"float8_e8m0fnu\", round_mode=\"nearest\"), cast(%q, dtype=\"uint2\"), cast(%x, dtype=\"float4_e2m1fn\")) }";
        IRModule m = IRModule.fromMain((dev.relayfarm.ir.Function) RelayParser.parseExpr(src));
        String printed = RelayPrinter.print(m);
        for (String name : new String[] {"float8_e4m3fn", "int4", "float8_e5m2", "saturate=True", "round_mode=\"nearest\"", "uint2", "float4_e2m1fn"}) {
            assertTrue(printed.contains(name), name + " in " + printed);
        }
        assertEquals(printed, RelayPrinter.print(RelayParser.parseModule(printed, "again.relay")));
        assertEquals(printed, RelayPrinter.print(IrJson.fromJson(IrJson.toJson(m))));
        // a low-bit constant goes through the metadata section and the JSON blobs
        IRModule c = IRModule.fromMain(new dev.relayfarm.ir.Function(List.of(), new dev.relayfarm.ir.Tuple(List.of(
                new dev.relayfarm.ir.Constant(NDArray.fromLongs(DType.INT4, new int[] {3}, new long[] {-8, 1, 7})),
                new dev.relayfarm.ir.Constant(NDArray.fromDoubles(DType.FLOAT8_E5M2, new int[0], new double[] {-1.5}))))));
        String text = RelayPrinter.print(c);
        assertEquals(text, RelayPrinter.print(RelayParser.parseModule(text, "c.relay")));
        assertEquals(text, RelayPrinter.print(IrJson.fromJson(IrJson.toJson(c))));
    }

    @Test
    void reinterpretKeepsFloat8CodesAndRefusesSubByteTypes() {
        var t = dev.relayfarm.types.TypeInference.inferExpr(
                RelayParser.parseExpr("fn (%x: Tensor[(2), float8_e5m2]) { reinterpret(%x, dtype=\"uint8\") }"), dev.relayfarm.types.OpResolver.REGISTRY);
        NDArray codes = run(t.module(), NDArray.fromDoubles(DType.FLOAT8_E5M2, new int[] {2}, new double[] {1.0, Double.NEGATIVE_INFINITY}));
        assertArrayEquals(new byte[] {0x3c, (byte) 0xfc}, codes.byteData());
        var e = assertThrows(RuntimeException.class, () -> dev.relayfarm.types.TypeInference.inferExpr(
                RelayParser.parseExpr("fn (%x: Tensor[(2), int4]) { reinterpret(%x, dtype=\"float4_e2m1fn\") }"), dev.relayfarm.types.OpResolver.REGISTRY));
        assertTrue(e.getMessage().contains("reinterpret") && e.getMessage().contains("int4"), e.getMessage());
    }

    @Test
    void castAttributesOnOtherTargetsAreRejected() {
        var e = assertThrows(RuntimeException.class, () -> dev.relayfarm.types.TypeInference.inferExpr(
                RelayParser.parseExpr("fn (%x: Tensor[(3), float32]) { cast(%x, dtype=\"float16\", saturate=True) }"), dev.relayfarm.types.OpResolver.REGISTRY));
        assertTrue(e.getMessage().contains("saturate"), e.getMessage());
    }
}
