package dev.relayfarm.ir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A dense, row-major n-dimensional array: the value of a {@link Constant} and of every interpreter
 * tensor.
 *
 * <p>Elements live in the primitive Java array that fits the dtype, so kernels run over primitive
 * arrays without boxing: float32 → {@code float[]}, float64 → {@code double[]}, float16/bfloat16 →
 * {@code short[]} (raw bits), int8/uint8/bool → {@code byte[]}, int16/uint16 → {@code short[]},
 * int4/uint4/int2/uint2 → {@code byte[]} (one value per byte, sign-extended for the signed ones), the
 * 8- and 4-bit floats → {@code byte[]} (one code per byte, see {@link MiniFloats}),
 * int32/uint32 → {@code int[]}, int64/uint64 → {@code long[]}, string → {@code String[]} (never null
 * elements). Unsigned values are stored in the signed array of the same width. An array with lanes holds
 * {@code size() * lanes} elements. The numeric accessors ({@link #getDouble}, {@link #setLong}, ...) throw on
 * strings; use {@link #stringData}.
 *
 * <p>By convention an NDArray is never mutated once it has been handed to someone else: a kernel
 * fills a fresh storage array and then wraps it.
 */
public final class NDArray {
    private final DType dtype;
    private final int[] shape;
    private final Object data;

    private NDArray(DType dtype, int[] shape, Object data) {
        this.dtype = dtype;
        this.shape = shape;
        this.data = data;
    }

    /** Wraps {@code data} (not copied); checks that its Java type and length fit the dtype and shape. */
    public static NDArray wrap(DType dtype, int[] shape, Object data) {
        int[] s = shape.clone();
        long n = dtype.lanes();
        for (int d : s) {
            if (d < 0) throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(s));
            n *= d;
        }
        if (n > Integer.MAX_VALUE) throw new IllegalArgumentException("tensor too large: shape " + Arrays.toString(s));
        Class<?> expected = storageClass(dtype);
        if (data.getClass() != expected) {
            throw new IllegalArgumentException(dtype + " needs " + expected.getSimpleName() + " storage, got " + data.getClass().getSimpleName());
        }
        int length = java.lang.reflect.Array.getLength(data);
        if (length != n) {
            throw new IllegalArgumentException("shape " + Arrays.toString(s) + " of " + dtype + " needs " + n + " elements, got " + length);
        }
        if (data instanceof String[] strs) {
            for (String x : strs) if (x == null) throw new IllegalArgumentException("a string tensor cannot hold null elements");
        }
        return new NDArray(dtype, s, data);
    }

    /** A zero-filled array. */
    public static NDArray zeros(DType dtype, int... shape) {
        return wrap(dtype, shape, allocate(dtype, elementCount(dtype, shape)));
    }

    public static NDArray scalar(float value) {
        return wrap(DType.FLOAT32, new int[0], new float[] {value});
    }

    public static NDArray scalar(double value) {
        return wrap(DType.FLOAT64, new int[0], new double[] {value});
    }

    public static NDArray scalar(int value) {
        return wrap(DType.INT32, new int[0], new int[] {value});
    }

    public static NDArray scalar(long value) {
        return wrap(DType.INT64, new int[0], new long[] {value});
    }

    public static NDArray scalar(boolean value) {
        return wrap(DType.BOOL, new int[0], new byte[] {(byte) (value ? 1 : 0)});
    }

    /** A string tensor holding {@code values} (copied) in row-major order. */
    public static NDArray ofStrings(int[] shape, String... values) {
        return wrap(DType.STRING, shape, values.clone());
    }

    /** Builds an array of any dtype from doubles (rounded/truncated as a cast would). */
    public static NDArray fromDoubles(DType dtype, int[] shape, double[] values) {
        NDArray a = zeros(dtype, shape);
        if (values.length != a.elementCount()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " needs " + a.elementCount() + " values, got " + values.length);
        }
        for (int i = 0; i < values.length; i++) a.setDouble(i, values[i]);
        return a;
    }

    /** Builds an array of any dtype from longs. */
    public static NDArray fromLongs(DType dtype, int[] shape, long[] values) {
        NDArray a = zeros(dtype, shape);
        if (values.length != a.elementCount()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " needs " + a.elementCount() + " values, got " + values.length);
        }
        for (int i = 0; i < values.length; i++) a.setLong(i, values[i]);
        return a;
    }

    /**
     * Decodes little-endian bytes (the layout of .npy, ONNX raw_data and our blobs). Strings are each a 4-byte
     * little-endian length followed by that many bytes of UTF-8.
     */
    public static NDArray fromBytes(DType dtype, int[] shape, byte[] bytes) {
        int n = elementCount(dtype, shape);
        if (dtype.isString()) return new NDArray(dtype, shape.clone(), decodeStrings(n, bytes, shape));
        if ((long) n * dtype.storageBytes() != bytes.length) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " needs " + (long) n * dtype.storageBytes() + " bytes, got " + bytes.length);
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        Object data = allocate(dtype, n);
        switch (data) {
            case float[] f -> buf.asFloatBuffer().get(f);
            case double[] d -> buf.asDoubleBuffer().get(d);
            case byte[] b -> buf.get(b);
            case short[] s -> buf.asShortBuffer().get(s);
            case int[] i -> buf.asIntBuffer().get(i);
            case long[] l -> buf.asLongBuffer().get(l);
            default -> throw new IllegalStateException();
        }
        return new NDArray(dtype, shape.clone(), data);
    }

    private static String[] decodeStrings(int n, byte[] bytes, int[] shape) {
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            if (buf.remaining() < 4) throw new IllegalArgumentException("string tensor of shape " + Arrays.toString(shape) + ": bytes end before element " + i);
            int len = buf.getInt();
            if (len < 0 || len > buf.remaining()) throw new IllegalArgumentException("string tensor of shape " + Arrays.toString(shape) + ": element " + i + " claims " + len + " bytes, " + buf.remaining() + " remain");
            out[i] = new String(bytes, buf.position(), len, java.nio.charset.StandardCharsets.UTF_8);
            buf.position(buf.position() + len);
        }
        if (buf.hasRemaining()) throw new IllegalArgumentException("string tensor of shape " + Arrays.toString(shape) + ": " + buf.remaining() + " bytes after the last element");
        return out;
    }

    public static int elementCount(DType dtype, int[] shape) {
        long n = dtype.lanes();
        for (int d : shape) n *= d;
        if (n > Integer.MAX_VALUE) throw new IllegalArgumentException("tensor too large: shape " + Arrays.toString(shape));
        return (int) n;
    }

    static Class<?> storageClass(DType dtype) {
        return switch (dtype.code()) {
            case STRING -> String[].class;
            case BOOL -> byte[].class;
            case BFLOAT -> short[].class;
            case FLOAT -> dtype.bits() == 16 ? short[].class : dtype.bits() == 32 ? float[].class : double[].class;
            case FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN -> byte[].class;
            case INT, UINT -> switch (dtype.bits()) {
                case 2, 4, 8 -> byte[].class;
                case 16 -> short[].class;
                case 32 -> int[].class;
                default -> long[].class;
            };
        };
    }

    static Object allocate(DType dtype, int n) {
        Class<?> c = storageClass(dtype);
        if (c == float[].class) return new float[n];
        if (c == double[].class) return new double[n];
        if (c == byte[].class) return new byte[n];
        if (c == short[].class) return new short[n];
        if (c == int[].class) return new int[n];
        if (c == String[].class) {
            String[] s = new String[n];
            Arrays.fill(s, "");
            return s;
        }
        return new long[n];
    }

    public DType dtype() {
        return dtype;
    }

    /** A copy of the shape. */
    public int[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public int dim(int axis) {
        return shape[axis];
    }

    /** Number of logical elements (product of the shape; lanes not counted). */
    public int size() {
        int n = 1;
        for (int d : shape) n *= d;
        return n;
    }

    /** Number of stored scalars (size × lanes). */
    public int elementCount() {
        return java.lang.reflect.Array.getLength(data);
    }

    /** The storage array itself (not a copy); see the class comment for its Java type. */
    public Object data() {
        return data;
    }

    public float[] floatData() {
        return (float[]) data;
    }

    public double[] doubleData() {
        return (double[]) data;
    }

    public byte[] byteData() {
        return (byte[]) data;
    }

    public short[] shortData() {
        return (short[]) data;
    }

    public int[] intData() {
        return (int[]) data;
    }

    public long[] longData() {
        return (long[]) data;
    }

    /** The elements of a string tensor (the storage itself, not a copy). */
    public String[] stringData() {
        if (!(data instanceof String[] s)) throw new IllegalStateException("stringData() of a " + dtype + " tensor");
        return s;
    }

    private IllegalStateException notNumeric() {
        return new IllegalStateException("a string tensor has no numeric values (use stringData())");
    }

    /** Element {@code i} (flat, row-major) converted to double; unsigned types read as unsigned. */
    public double getDouble(int i) {
        return switch (dtype.code()) {
            case STRING -> throw notNumeric();
            case FLOAT -> switch (dtype.bits()) {
                case 16 -> Float.float16ToFloat(((short[]) data)[i]);
                case 32 -> ((float[]) data)[i];
                default -> ((double[]) data)[i];
            };
            case BFLOAT -> HalfFloats.bfloat16ToFloat(((short[]) data)[i]);
            case FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN ->
                    MiniFloats.decode(MiniFloats.format(dtype), ((byte[]) data)[i]);
            case UINT -> dtype.bits() == 64 ? unsignedToDouble(((long[]) data)[i]) : getLong(i);
            case INT, BOOL -> getLong(i);
        };
    }

    private static double unsignedToDouble(long v) {
        double d = (double) (v >>> 1) * 2.0;
        return d + (v & 1);
    }

    /** Element {@code i} converted to long (floats truncate toward zero); unsigned types read as unsigned. */
    public long getLong(int i) {
        boolean unsigned = dtype.code() == DType.Code.UINT || dtype.code() == DType.Code.BOOL;
        if (dtype.isString()) throw notNumeric();
        return switch (data) {
            case byte[] b when dtype.isMiniFloat() -> (long) getDouble(i);
            case byte[] b -> unsigned ? b[i] & 0xffL : b[i];
            case short[] s when dtype.isFloat() -> (long) getDouble(i);
            case short[] s -> unsigned ? s[i] & 0xffffL : s[i];
            case int[] v -> unsigned ? v[i] & 0xffffffffL : v[i];
            case long[] v -> v[i];
            case float[] f -> (long) f[i];
            case double[] d -> (long) d[i];
            default -> throw new IllegalStateException();
        };
    }

    public boolean getBoolean(int i) {
        return dtype.isFloat() ? getDouble(i) != 0.0 : getLong(i) != 0;
    }

    /** Stores {@code v} at flat index {@code i}, converting as a cast to the dtype would. Only for arrays being filled. */
    public void setDouble(int i, double v) {
        switch (dtype.code()) {
            case STRING -> throw notNumeric();
            case FLOAT -> {
                switch (dtype.bits()) {
                    case 16 -> ((short[]) data)[i] = HalfFloats.toFloat16(v);
                    case 32 -> ((float[]) data)[i] = (float) v;
                    default -> ((double[]) data)[i] = v;
                }
            }
            case BFLOAT -> ((short[]) data)[i] = HalfFloats.toBfloat16(v);
            case FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN ->
                    ((byte[]) data)[i] = (byte) MiniFloats.encode(MiniFloats.format(dtype), v);
            case BOOL -> ((byte[]) data)[i] = (byte) (v != 0.0 ? 1 : 0);
            case INT, UINT -> setLong(i, dtype.code() == DType.Code.UINT && v >= 0x1p63 ? (long) (v - 0x1p63) ^ Long.MIN_VALUE : (long) v);
        }
    }

    /** Stores {@code v} at flat index {@code i}, wrapping to the dtype's width. Only for arrays being filled. */
    public void setLong(int i, long v) {
        if (dtype.isString()) throw notNumeric();
        if (dtype.isFloat()) {
            // an 8/4-bit float rounds once from the double (e8m0 rounds up, so a detour through float could change it)
            setDouble(i, dtype.code() == DType.Code.FLOAT && dtype.bits() == 64 || dtype.isMiniFloat() ? (double) v : (float) v);
            return;
        }
        switch (data) {
            case byte[] b -> b[i] = dtype.isBool() ? (byte) (v != 0 ? 1 : 0) : (byte) wrapLowBits(dtype, v);
            case short[] s -> s[i] = (short) v;
            case int[] a -> a[i] = (int) v;
            case long[] a -> a[i] = v;
            default -> throw new IllegalStateException();
        }
    }

    /** {@code v} wrapped to a 2-, 4- or 8-bit integer dtype: sign-extended from its width for intN, masked for uintN. */
    public static long wrapLowBits(DType t, long v) {
        int bits = t.bits();
        if (bits >= 8) return v;
        return t.code() == DType.Code.INT ? (v << (64 - bits)) >> (64 - bits) : v & ((1L << bits) - 1);
    }

    /** An independent array with the same dtype, shape and values. */
    public NDArray copy() {
        return fromBytes(dtype, shape.clone(), toBytes());
    }

    /** Little-endian bytes of the storage (the inverse of {@link #fromBytes}). */
    public byte[] toBytes() {
        if (data instanceof String[] strs) {
            byte[][] utf8 = new byte[strs.length][];
            int total = 0;
            for (int i = 0; i < strs.length; i++) {
                utf8[i] = strs[i].getBytes(java.nio.charset.StandardCharsets.UTF_8);
                total = Math.addExact(total, 4 + utf8[i].length);
            }
            ByteBuffer buf = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
            for (byte[] b : utf8) buf.putInt(b.length).put(b);
            return buf.array();
        }
        int n = elementCount();
        ByteBuffer buf = ByteBuffer.allocate(n * dtype.storageBytes()).order(ByteOrder.LITTLE_ENDIAN);
        switch (data) {
            case float[] f -> buf.asFloatBuffer().put(f);
            case double[] d -> buf.asDoubleBuffer().put(d);
            case byte[] b -> buf.put(b);
            case short[] s -> buf.asShortBuffer().put(s);
            case int[] i -> buf.asIntBuffer().put(i);
            case long[] l -> buf.asLongBuffer().put(l);
            default -> throw new IllegalStateException();
        }
        return buf.array();
    }

    /** Content hash over dtype, shape and bytes: the key of the blob store. */
    public String sha256() {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update((dtype + Arrays.toString(shape)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            md.update(toBytes());
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Size of the storage in bytes (for strings an upper bound on their serialized form, {@link #toBytes}, computed without encoding). */
    public long byteSize() {
        if (data instanceof String[] strs) {
            long n = 0;
            for (String x : strs) n += 4 + (long) x.length() * 3; // an upper bound on UTF-8, without encoding
            return n;
        }
        return (long) elementCount() * dtype.storageBytes();
    }

    /** Bitwise equality of dtype, shape and contents (NaNs with equal bits are equal). */
    public boolean contentEquals(NDArray other) {
        if (this == other) return true;
        if (!dtype.equals(other.dtype) || !Arrays.equals(shape, other.shape)) return false;
        return switch (data) {
            case float[] f -> {
                float[] g = (float[]) other.data;
                for (int i = 0; i < f.length; i++) if (Float.floatToRawIntBits(f[i]) != Float.floatToRawIntBits(g[i])) yield false;
                yield true;
            }
            case double[] d -> {
                double[] g = (double[]) other.data;
                for (int i = 0; i < d.length; i++) if (Double.doubleToRawLongBits(d[i]) != Double.doubleToRawLongBits(g[i])) yield false;
                yield true;
            }
            case byte[] b -> Arrays.equals(b, (byte[]) other.data);
            case short[] s -> Arrays.equals(s, (short[]) other.data);
            case int[] i -> Arrays.equals(i, (int[]) other.data);
            case long[] l -> Arrays.equals(l, (long[]) other.data);
            case String[] t -> Arrays.equals(t, (String[]) other.data);
            default -> false;
        };
    }

    /** A hash consistent with {@link #contentEquals}. */
    public int contentHash() {
        int h = dtype.hashCode() * 31 + Arrays.hashCode(shape);
        return h * 31 + switch (data) {
            case float[] f -> { int x = 1; for (float v : f) x = 31 * x + Float.floatToRawIntBits(v); yield x; }
            case double[] d -> { int x = 1; for (double v : d) x = 31 * x + Long.hashCode(Double.doubleToRawLongBits(v)); yield x; }
            case byte[] b -> Arrays.hashCode(b);
            case short[] s -> Arrays.hashCode(s);
            case int[] i -> Arrays.hashCode(i);
            case long[] l -> Arrays.hashCode(l);
            case String[] t -> Arrays.hashCode(t);
            default -> 0;
        };
    }

    /** NDArrays compare by identity; use {@link #contentEquals} for contents. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("NDArray(").append(dtype).append(", ").append(Arrays.toString(shape)).append(", [");
        int n = Math.min(elementCount(), 8);
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(", ");
            sb.append(dtype.isString() ? quote(((String[]) data)[i]) : dtype.isFloat() ? Double.toString(getDouble(i)) : Long.toString(getLong(i)));
        }
        if (elementCount() > n) sb.append(", ...");
        return sb.append("])").toString();
    }

    /** {@code s} as a double-quoted literal: quote, backslash, newline, return and tab escaped with a backslash, other control characters as u-escapes. */
    public static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
                }
            }
        }
        return sb.append('"').toString();
    }
}
