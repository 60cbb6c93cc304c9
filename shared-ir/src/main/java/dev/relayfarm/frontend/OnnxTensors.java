package dev.relayfarm.frontend;

import com.google.protobuf.ByteString;
import dev.relayfarm.frontend.proto.Onnx.StringStringEntryProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Decodes ONNX {@code TensorProto}s into {@link NDArray}s: little-endian {@code raw_data}, the typed
 * repeated fields (with ONNX's packing rules: 8/16-bit ints, bool, float16 and bfloat16 travel in
 * {@code int32_data}; uint32/uint64 in {@code uint64_data}), strings in {@code string_data} (UTF-8 bytes
 * each), and external data files next to the model. The 4- and 2-bit types (int4, uint4, float4e2m1;
 * int2, uint2) arrive packed, two or four to a byte, the first element in the lowest bits, in
 * {@code raw_data} and in {@code int32_data} (one packed byte per int32; one element per int32 is
 * accepted too); they are unpacked to one element per byte (sign-extended for int4/int2), and packed
 * again by {@link #fromNDArray}. The 8-bit floats take one byte each ({@code int32_data}: one code per int32).
 */
public final class OnnxTensors {
    private OnnxTensors() {}

    /**
     * Decodes {@code t}. {@code baseDir} resolves external data (may be null when there is none);
     * {@code where} names the tensor's origin for error messages (file and initializer/node name).
     */
    public static NDArray toNDArray(TensorProto t, Path baseDir, String where) {
        String label = where + (t.getName().isEmpty() ? "" : ": tensor '" + t.getName() + "'");
        DType dtype = OnnxDTypes.require(t.getDataType(), label);
        int[] shape = new int[t.getDimsCount()];
        for (int i = 0; i < shape.length; i++) {
            long d = t.getDims(i);
            if (d < 0 || d > Integer.MAX_VALUE) throw new OnnxFormatException(label + ": invalid dimension " + d + " in " + t.getDimsList());
            shape[i] = (int) d;
        }
        int n;
        try {
            n = NDArray.elementCount(dtype, shape);
        } catch (IllegalArgumentException e) {
            throw new OnnxFormatException(label + ": " + e.getMessage() + " (more than 2^31-1 elements)", e);
        }
        if (dtype.isString()) {
            // ONNX stores strings only in string_data (raw_data cannot hold them); each element is UTF-8 bytes.
            if (t.hasRawData() || t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
                throw new OnnxFormatException(label + ": a string tensor must keep its values in string_data");
            }
            if (t.getStringDataCount() != n) {
                throw new OnnxFormatException(label + ": shape " + Arrays.toString(shape) + " needs " + n + " strings, the tensor holds " + t.getStringDataCount());
            }
            String[] values = new String[n];
            for (int i = 0; i < n; i++) values[i] = t.getStringData(i).toStringUtf8();
            return NDArray.wrap(dtype, shape, values);
        }
        if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
            return fromRaw(dtype, shape, readExternal(t, baseDir, label), label);
        }
        if (t.hasRawData()) {
            return fromRaw(dtype, shape, t.getRawData().toByteArray(), label);
        }
        int per = perByte(dtype);
        if (per > 1) {
            int count = t.getInt32DataCount();
            byte[] packed = new byte[count];
            for (int i = 0; i < count; i++) packed[i] = (byte) t.getInt32Data(i);
            if (count == n && count != packedLength(n, per)) return unpack(dtype, shape, packed, 1);
            if (count != packedLength(n, per)) {
                throw new OnnxFormatException(label + ": shape " + Arrays.toString(shape) + " of " + dtype + " needs " + packedLength(n, per) + " packed values, the tensor holds " + count);
            }
            return unpack(dtype, shape, packed, per);
        }
        // The typed values are counted before the array is allocated: dims that promise a billion values over a
        // handful of stored ones are a malformed tensor, not a reason to allocate gigabytes.
        int stored = Math.max(Math.max(t.getFloatDataCount(), t.getDoubleDataCount()), Math.max(Math.max(t.getInt64DataCount(), t.getUint64DataCount()), t.getInt32DataCount()));
        if (stored < n) throw new OnnxFormatException(label + ": shape " + Arrays.toString(shape) + " needs " + n + " values, the tensor holds " + stored);
        NDArray out = NDArray.zeros(dtype, shape);
        int have = switch (t.getDataType()) {
            case TensorProto.DataType.FLOAT_VALUE -> {
                float[] dst = out.floatData();
                for (int i = 0; i < Math.min(n, t.getFloatDataCount()); i++) dst[i] = t.getFloatData(i);
                yield t.getFloatDataCount();
            }
            case TensorProto.DataType.DOUBLE_VALUE -> {
                double[] dst = out.doubleData();
                for (int i = 0; i < Math.min(n, t.getDoubleDataCount()); i++) dst[i] = t.getDoubleData(i);
                yield t.getDoubleDataCount();
            }
            case TensorProto.DataType.INT64_VALUE -> {
                long[] dst = out.longData();
                for (int i = 0; i < Math.min(n, t.getInt64DataCount()); i++) dst[i] = t.getInt64Data(i);
                yield t.getInt64DataCount();
            }
            case TensorProto.DataType.UINT32_VALUE, TensorProto.DataType.UINT64_VALUE -> {
                for (int i = 0; i < Math.min(n, t.getUint64DataCount()); i++) out.setLong(i, t.getUint64Data(i));
                yield t.getUint64DataCount();
            }
            case TensorProto.DataType.FLOAT16_VALUE, TensorProto.DataType.BFLOAT16_VALUE -> {
                short[] dst = out.shortData(); // bit patterns, stored as-is
                for (int i = 0; i < Math.min(n, t.getInt32DataCount()); i++) dst[i] = (short) t.getInt32Data(i);
                yield t.getInt32DataCount();
            }
            case TensorProto.DataType.FLOAT8E4M3FN_VALUE, TensorProto.DataType.FLOAT8E4M3FNUZ_VALUE, TensorProto.DataType.FLOAT8E5M2_VALUE,
                    TensorProto.DataType.FLOAT8E5M2FNUZ_VALUE, TensorProto.DataType.FLOAT8E8M0_VALUE -> {
                byte[] dst = out.byteData(); // codes, stored as-is
                for (int i = 0; i < Math.min(n, t.getInt32DataCount()); i++) dst[i] = (byte) t.getInt32Data(i);
                yield t.getInt32DataCount();
            }
            default -> { // int8/16/32, uint8/16, bool
                for (int i = 0; i < Math.min(n, t.getInt32DataCount()); i++) out.setLong(i, t.getInt32Data(i));
                yield t.getInt32DataCount();
            }
        };
        if (have != n) {
            throw new OnnxFormatException(label + ": shape " + Arrays.toString(shape) + " needs " + n + " values, the tensor holds " + have);
        }
        return out;
    }

    /** Elements per byte in ONNX's encoding: 2 for int4/uint4/float4e2m1, 4 for int2/uint2, else 1. */
    static int perByte(DType t) {
        return t.lanes() == 1 && t.bits() < 8 && t.code() != DType.Code.BOOL ? 8 / t.bits() : 1;
    }

    private static int packedLength(int n, int per) {
        return (n + per - 1) / per;
    }

    /** One element per byte from {@code per} to a byte (low bits first); int4/int2 sign-extended. */
    static NDArray unpack(DType t, int[] shape, byte[] packed, int per) {
        int n = NDArray.elementCount(t, shape), bits = t.bits();
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            int v = (packed[i / per] >> (bits * (i % per))) & ((1 << bits) - 1);
            out[i] = (byte) (t.code() == DType.Code.INT ? NDArray.wrapLowBits(t, v) : v);
        }
        return NDArray.wrap(t, shape, out);
    }

    /** ONNX's packed bytes of a 4- or 2-bit array (the last byte's unused high bits zero). */
    static byte[] pack(NDArray a) {
        int per = perByte(a.dtype()), bits = a.dtype().bits(), n = a.elementCount();
        byte[] in = a.byteData(), out = new byte[packedLength(n, per)];
        for (int i = 0; i < n; i++) out[i / per] |= (byte) ((in[i] & ((1 << bits) - 1)) << (bits * (i % per)));
        return out;
    }

    private static NDArray fromRaw(DType dtype, int[] shape, byte[] bytes, String label) {
        int per = perByte(dtype);
        if (per > 1) {
            int n = NDArray.elementCount(dtype, shape);
            if (bytes.length != packedLength(n, per)) {
                throw new OnnxFormatException(label + ": shape " + Arrays.toString(shape) + " of " + dtype + " needs " + packedLength(n, per) + " packed bytes, got " + bytes.length);
            }
            return unpack(dtype, shape, bytes, per);
        }
        try {
            return NDArray.fromBytes(dtype, shape, bytes);
        } catch (IllegalArgumentException e) {
            throw new OnnxFormatException(label + ": " + e.getMessage(), e);
        }
    }

    private static byte[] readExternal(TensorProto t, Path baseDir, String label) {
        String location = null;
        long offset = 0;
        long length = -1;
        for (StringStringEntryProto e : t.getExternalDataList()) {
            switch (e.getKey()) {
                case "location" -> location = e.getValue();
                case "offset" -> offset = Long.parseLong(e.getValue());
                case "length" -> length = Long.parseLong(e.getValue());
                default -> { } // "checksum" and future keys: not needed to read the bytes
            }
        }
        if (location == null) throw new OnnxFormatException(label + ": external data without a 'location'");
        if (baseDir == null) throw new OnnxFormatException(label + ": external data '" + location + "' but no model directory is known");
        Path file = baseDir.resolve(location).normalize();
        if (!file.startsWith(baseDir.normalize())) {
            throw new OnnxFormatException(label + ": external data location '" + location + "' leaves the model directory");
        }
        if (!Files.isRegularFile(file)) throw new OnnxFormatException(label + ": external data file " + file + " does not exist");
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long len = length >= 0 ? length : f.length() - offset;
            if (offset < 0 || len < 0 || offset + len > f.length() || len > Integer.MAX_VALUE) {
                throw new OnnxFormatException(label + ": external data range [" + offset + ", " + (offset + len) + ") is outside " + file + " (" + f.length() + " bytes)");
            }
            byte[] bytes = new byte[(int) len];
            f.seek(offset);
            f.readFully(bytes);
            return bytes;
        } catch (IOException e) {
            throw new OnnxFormatException(label + ": cannot read external data " + file + ": " + e.getMessage(), e);
        }
    }

    /** Encodes an NDArray as a TensorProto with raw_data, strings in string_data (for writing test data and models in tests). */
    public static TensorProto fromNDArray(NDArray a, String name) {
        TensorProto.Builder b = TensorProto.newBuilder().setName(name).setDataType(OnnxDTypes.toOnnx(a.dtype()));
        for (int d : a.shape()) b.addDims(d);
        if (a.dtype().isString()) {
            for (String x : a.stringData()) b.addStringData(ByteString.copyFromUtf8(x));
            return b.build();
        }
        return b.setRawData(ByteString.copyFrom(perByte(a.dtype()) > 1 ? pack(a) : a.toBytes())).build();
    }
}
