package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import dev.relayfarm.conformance.OnnxTestCase;
import dev.relayfarm.frontend.proto.Onnx.StringStringEntryProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OnnxTensorsTest {
    @Test
    void decodesTypedFieldsWithOnnxPackingRules() {
        TensorProto f = TensorProto.newBuilder().setDataType(TensorProto.DataType.FLOAT_VALUE).addDims(2)
                .addFloatData(1.5f).addFloatData(-2f).build();
        assertArrayEquals(new float[] {1.5f, -2f}, OnnxTensors.toNDArray(f, null, "t").floatData());

        TensorProto u8 = TensorProto.newBuilder().setDataType(TensorProto.DataType.UINT8_VALUE).addDims(2)
                .addInt32Data(255).addInt32Data(3).build();
        NDArray a = OnnxTensors.toNDArray(u8, null, "t");
        assertEquals(DType.UINT8, a.dtype());
        assertEquals(255, a.getLong(0));

        short half = Float.floatToFloat16(0.75f);
        TensorProto h = TensorProto.newBuilder().setDataType(TensorProto.DataType.FLOAT16_VALUE)
                .addInt32Data(half & 0xffff).build();
        assertEquals(0.75, OnnxTensors.toNDArray(h, null, "t").getDouble(0));

        TensorProto u64 = TensorProto.newBuilder().setDataType(TensorProto.DataType.UINT64_VALUE).addDims(1)
                .addUint64Data(-1L).build();
        assertEquals(0x1p64, OnnxTensors.toNDArray(u64, null, "t").getDouble(0));
    }

    @Test
    void rawDataRoundTrips() {
        NDArray a = NDArray.fromDoubles(DType.INT16, new int[] {2, 2}, new double[] {1, -2, 3, 300});
        NDArray b = OnnxTensors.toNDArray(OnnxTensors.fromNDArray(a, "w"), null, "t");
        assertTrue(a.contentEquals(b));
    }

    @Test
    void wrongValueCountNamesTheTensor() {
        TensorProto bad = TensorProto.newBuilder().setName("conv1.weight").setDataType(TensorProto.DataType.FLOAT_VALUE)
                .addDims(3).addFloatData(1f).build();
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(bad, null, "m.onnx"));
        assertEquals("m.onnx: tensor 'conv1.weight': shape [3] needs 3 values, the tensor holds 1", e.getMessage());
        TensorProto str = TensorProto.newBuilder().setName("s").setDataType(TensorProto.DataType.STRING_VALUE).build();
        e = assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(str, null, "m.onnx"));
        assertEquals("m.onnx: tensor 's': shape [] needs 1 strings, the tensor holds 0", e.getMessage());
        TensorProto complex = TensorProto.newBuilder().setName("c").setDataType(TensorProto.DataType.COMPLEX64_VALUE).build();
        e = assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(complex, null, "m.onnx"));
        assertTrue(e.getMessage().contains("unsupported ONNX element type COMPLEX64"), e.getMessage());
    }

    @Test
    void readsExternalDataRelativeToTheModel(@TempDir Path dir) throws IOException {
        NDArray a = NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {1, 2, 3});
        byte[] payload = new byte[4 + 12];
        System.arraycopy(a.toBytes(), 0, payload, 4, 12);
        Files.write(dir.resolve("weights.bin"), payload);
        TensorProto t = TensorProto.newBuilder().setName("w").setDataType(TensorProto.DataType.FLOAT_VALUE).addDims(3)
                .setDataLocation(TensorProto.DataLocation.EXTERNAL)
                .addExternalData(StringStringEntryProto.newBuilder().setKey("location").setValue("weights.bin"))
                .addExternalData(StringStringEntryProto.newBuilder().setKey("offset").setValue("4"))
                .addExternalData(StringStringEntryProto.newBuilder().setKey("length").setValue("12"))
                .build();
        assertTrue(a.contentEquals(OnnxTensors.toNDArray(t, dir, "m.onnx")));
        TensorProto escaping = t.toBuilder().setExternalData(0, StringStringEntryProto.newBuilder().setKey("location").setValue("../x.bin")).build();
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(escaping, dir, "m.onnx"));
        assertTrue(e.getMessage().contains("leaves the model directory"), e.getMessage());
    }

    @Test
    void malformedModelFileIsReportedWithItsPath(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("broken.onnx");
        Files.write(f, new byte[] {0x0a, (byte) 0xff, 0x01});
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxModels.read(f));
        assertTrue(e.getMessage().startsWith(f + ": not a valid ONNX model"), e.getMessage());
    }

    /**
     * Every tensor in the ONNX backend node suite decodes, with the dtype and static shape its graph
     * declares. Skips when the suite is absent (it lives outside the repository).
     */
    @Test
    void decodesEveryTensorOfTheNodeSuite() throws IOException {
        Optional<Path> root = OnnxTestData.nodeTests();
        assumeTrue(root.isPresent(), "ONNX node tests not found (../shared/onnx/node or libonnx-testdata): skipped");
        int tensors = 0, unsupported = 0, cases = 0;
        try (Stream<Path> dirs = Files.list(root.get())) {
            for (Path dir : dirs.filter(d -> Files.exists(d.resolve("model.onnx"))).sorted().toList()) {
                OnnxTestCase tc = OnnxTestCase.load(dir);
                cases++;
                for (OnnxTestCase.DataSet ds : tc.dataSets()) {
                    List<ValueInfoProto> outs = tc.model().getGraph().getOutputList();
                    for (int i = 0; i < ds.outputs().size(); i++) {
                        Message m = ds.outputs().get(i);
                        if (!(m instanceof TensorProto t)) continue;
                        TypeProto.Tensor declared = outs.get(i).getType().getTensorType();
                        if (OnnxDTypes.toDType(t.getDataType()).isEmpty()) {
                            unsupported++;
                            continue;
                        }
                        NDArray a = OnnxTensors.toNDArray(t, dir, ds.dir().toString());
                        tensors++;
                        assertEquals(OnnxDTypes.toDType(declared.getElemType()).orElseThrow(), a.dtype(), dir.toString());
                        if (declared.hasShape() && declared.getShape().getDimList().stream().allMatch(d -> d.hasDimValue())) {
                            long[] want = declared.getShape().getDimList().stream().mapToLong(d -> d.getDimValue()).toArray();
                            long[] got = java.util.Arrays.stream(a.shape()).asLongStream().toArray();
                            assertArrayEquals(want, got, dir + " output " + i);
                        }
                    }
                }
            }
        }
        System.out.printf("ONNX node suite: %d test folders, %d output tensors decoded, %d of unsupported dtypes%n", cases, tensors, unsupported);
        assertTrue(cases > 900, "expected the node suite, found " + cases + " folders");
        assertTrue(tensors > cases, "decoded " + tensors);
    }
}
