package dev.relayfarm.interp;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes NumPy {@code .npy} files, the exchange format for model inputs and outputs
 * ({@code relayc run --arg x=x.npy}).
 *
 * <p>Format: the magic {@code \x93NUMPY}, a version byte pair, the header length (2 bytes little
 * endian in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal such as
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }} padded with spaces to a
 * multiple of 64 bytes and ended by a newline, then the raw elements. Reading accepts versions
 * 1.0–3.0, little- and big-endian data and every dtype {@link NDArray} has a NumPy equivalent for
 * ({@code f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1}). Writing produces what {@code numpy.save} does: version
 * 1.0 (2.0 only when the header does not fit), little-endian, C order.
 *
 * <p>Not supported, with a message saying so: Fortran-order arrays, structured and object dtypes,
 * bfloat16 and vector (lanes &gt; 1) dtypes, which have no {@code .npy} spelling.
 */
public final class Npy {
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final int ALIGN = 64;

    private Npy() {}

    /** Thrown for a malformed or unsupported file; the message names the problem. */
    public static final class NpyException extends RuntimeException {
        public NpyException(String message) {
            super(message);
        }
    }

    // ---------------------------------------------------------------- reading

    public static NDArray read(Path file) throws IOException {
        try {
            return fromBytes(Files.readAllBytes(file));
        } catch (NpyException e) {
            throw new NpyException(file + ": " + e.getMessage());
        }
    }

    public static NDArray read(InputStream in) throws IOException {
        return fromBytes(in.readAllBytes());
    }

    public static NDArray fromBytes(byte[] bytes) {
        if (bytes.length < 10 || !startsWithMagic(bytes)) throw new NpyException("not a .npy file (missing the \\x93NUMPY magic)");
        int major = bytes[6] & 0xff;
        int minor = bytes[7] & 0xff;
        int headerLen;
        int headerStart;
        Charset charset;
        switch (major) {
            case 1 -> {
                headerLen = (bytes[8] & 0xff) | (bytes[9] & 0xff) << 8;
                headerStart = 10;
                charset = StandardCharsets.ISO_8859_1;
            }
            case 2, 3 -> {
                if (bytes.length < 12) throw new NpyException("truncated header");
                long len = (bytes[8] & 0xffL) | (bytes[9] & 0xffL) << 8 | (bytes[10] & 0xffL) << 16 | (bytes[11] & 0xffL) << 24;
                if (len > Integer.MAX_VALUE) throw new NpyException("header length " + len + " is too large");
                headerLen = (int) len;
                headerStart = 12;
                charset = major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1;
            }
            default -> throw new NpyException("unsupported .npy format version " + major + "." + minor + " (1.0, 2.0 and 3.0 are supported)");
        }
        if ((long) headerStart + headerLen > bytes.length) throw new NpyException("truncated header: it claims " + headerLen + " bytes");
        String header = new String(bytes, headerStart, headerLen, charset);
        Map<String, Object> dict = new HeaderParser(header).dict();

        Object descr = dict.get("descr");
        if (!(descr instanceof String d)) {
            throw new NpyException("structured or missing dtype " + HeaderParser.show(descr) + " is not supported; save a plain numeric array");
        }
        if (!(dict.get("fortran_order") instanceof Boolean fortran)) throw new NpyException("header lacks a boolean 'fortran_order'");
        if (fortran) {
            throw new NpyException("fortran_order=True is not supported: save a C-ordered array (numpy.ascontiguousarray(a))");
        }
        if (!(dict.get("shape") instanceof List<?> dims)) throw new NpyException("header lacks a 'shape' tuple");
        int[] shape = new int[dims.size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(dims.get(i) instanceof Long n) || n < 0 || n > Integer.MAX_VALUE) throw new NpyException("bad dimension " + dims.get(i) + " in shape");
            shape[i] = (int) (long) n;
        }
        Descr parsed = Descr.parse(d);
        int count = NDArray.elementCount(parsed.dtype, shape);
        int dataStart = headerStart + headerLen;
        long needed = (long) count * parsed.dtype.storageBytes();
        if (bytes.length - dataStart < needed) {
            throw new NpyException("truncated data: shape " + java.util.Arrays.toString(shape) + " of " + d + " needs " + needed + " bytes, file has " + (bytes.length - dataStart));
        }
        byte[] data = java.util.Arrays.copyOfRange(bytes, dataStart, dataStart + (int) needed);
        if (parsed.bigEndian) swapBytes(data, parsed.dtype.storageBytes());
        return NDArray.fromBytes(parsed.dtype, shape, data);
    }

    private static boolean startsWithMagic(byte[] bytes) {
        for (int i = 0; i < MAGIC.length; i++) if (bytes[i] != MAGIC[i]) return false;
        return true;
    }

    private static void swapBytes(byte[] data, int width) {
        for (int i = 0; i < data.length; i += width) {
            for (int a = i, b = i + width - 1; a < b; a++, b--) {
                byte t = data[a];
                data[a] = data[b];
                data[b] = t;
            }
        }
    }

    /** A parsed {@code descr} string: byte order, kind and size. */
    private record Descr(DType dtype, boolean bigEndian) {
        static Descr parse(String d) {
            if (d.length() < 3) throw new NpyException("unsupported dtype '" + d + "'");
            char order = d.charAt(0);
            boolean big = switch (order) {
                case '<', '|' -> false;
                case '>' -> true;
                // '=' is the writer's native order; like NumPy, assume it is the reader's.
                case '=' -> java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.BIG_ENDIAN;
                default -> throw new NpyException("unsupported dtype '" + d + "': unknown byte order '" + order + "'");
            };
            DType dtype = switch (d.substring(1)) {
                case "f2" -> DType.FLOAT16;
                case "f4" -> DType.FLOAT32;
                case "f8" -> DType.FLOAT64;
                case "i1" -> DType.INT8;
                case "i2" -> DType.INT16;
                case "i4" -> DType.INT32;
                case "i8" -> DType.INT64;
                case "u1" -> DType.UINT8;
                case "u2" -> DType.UINT16;
                case "u4" -> DType.UINT32;
                case "u8" -> DType.UINT64;
                case "b1" -> DType.BOOL;
                default -> throw new NpyException("unsupported dtype '" + d + "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)");
            };
            return new Descr(dtype, big && dtype.storageBytes() > 1);
        }
    }

    /**
     * Parses the header's Python literal: a dict of string keys to strings, booleans, integers and
     * tuples/lists of those (enough to recognise, and then reject, structured dtypes).
     */
    private static final class HeaderParser {
        private final String s;
        private int pos;

        HeaderParser(String s) {
            this.s = s;
        }

        Map<String, Object> dict() {
            skipSpace();
            expect('{');
            Map<String, Object> out = new LinkedHashMap<>();
            while (true) {
                skipSpace();
                if (peek() == '}') {
                    pos++;
                    break;
                }
                Object key = value();
                if (!(key instanceof String k)) throw error("dict key must be a string");
                skipSpace();
                expect(':');
                out.put(k, value());
                skipSpace();
                if (peek() == ',') pos++;
                else if (peek() != '}') throw error("expected ',' or '}'");
            }
            return out;
        }

        private Object value() {
            skipSpace();
            char c = peek();
            if (c == '\'' || c == '"') {
                int end = s.indexOf(c, pos + 1);
                if (end < 0) throw error("unterminated string");
                String str = s.substring(pos + 1, end);
                pos = end + 1;
                return str;
            }
            if (c == '(' || c == '[') {
                char close = c == '(' ? ')' : ']';
                pos++;
                List<Object> items = new ArrayList<>();
                while (true) {
                    skipSpace();
                    if (peek() == close) {
                        pos++;
                        return items;
                    }
                    items.add(value());
                    skipSpace();
                    if (peek() == ',') pos++;
                    else if (peek() != close) throw error("expected ',' or '" + close + "'");
                }
            }
            if (s.startsWith("True", pos)) {
                pos += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("False", pos)) {
                pos += 5;
                return Boolean.FALSE;
            }
            int start = pos;
            if (c == '-') pos++;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++;
            // Python 2 era writers may append 'L' to long integers.
            String digits = s.substring(start, pos);
            if (pos < s.length() && s.charAt(pos) == 'L') pos++;
            if (digits.isEmpty() || digits.equals("-")) throw error("unexpected character '" + c + "'");
            try {
                return Long.parseLong(digits);
            } catch (NumberFormatException e) {
                throw error("integer " + digits + " out of range");
            }
        }

        private char peek() {
            if (pos >= s.length()) throw error("unexpected end of header");
            return s.charAt(pos);
        }

        private void expect(char c) {
            if (peek() != c) throw error("expected '" + c + "'");
            pos++;
        }

        private void skipSpace() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
        }

        private NpyException error(String what) {
            return new NpyException("malformed header at offset " + pos + ": " + what + " in " + s.strip());
        }

        static String show(Object o) {
            return o == null ? "(none)" : o.toString();
        }
    }

    // ---------------------------------------------------------------- writing

    public static void write(Path file, NDArray array) throws IOException {
        Files.write(file, toBytes(array));
    }

    public static void write(OutputStream out, NDArray array) throws IOException {
        out.write(toBytes(array));
    }

    /** The bytes {@code numpy.save} would write for this array. */
    public static byte[] toBytes(NDArray array) {
        String dict = "{'descr': '" + descr(array.dtype()) + "', 'fortran_order': False, 'shape': " + shapeLiteral(array.shape()) + ", }";
        byte[] dictBytes = dict.getBytes(StandardCharsets.ISO_8859_1);
        int major = dictBytes.length + 1 + 10 > 0xffff ? 2 : 1;
        int prefix = major == 1 ? 10 : 12;
        int total = prefix + dictBytes.length + 1;
        int padding = (ALIGN - total % ALIGN) % ALIGN;
        int headerLen = dictBytes.length + padding + 1;

        ByteArrayOutputStream out = new ByteArrayOutputStream(prefix + headerLen + (int) array.byteSize());
        out.writeBytes(MAGIC);
        out.write(major);
        out.write(0);
        out.write(headerLen & 0xff);
        out.write((headerLen >>> 8) & 0xff);
        if (major == 2) {
            out.write((headerLen >>> 16) & 0xff);
            out.write((headerLen >>> 24) & 0xff);
        }
        out.writeBytes(dictBytes);
        for (int i = 0; i < padding; i++) out.write(' ');
        out.write('\n');
        out.writeBytes(array.toBytes());
        return out.toByteArray();
    }

    /** NumPy's spelling of a dtype, as {@code numpy.save} writes it on a little-endian machine. */
    static String descr(DType dtype) {
        if (dtype.lanes() != 1) throw new NpyException("vector dtype " + dtype + " has no .npy equivalent");
        if (dtype.isLowBit()) throw new NpyException(dtype + " has no .npy equivalent; cast to float32 (or int8/uint8) first");
        return switch (dtype.code()) {
            case FLOAT -> "<f" + dtype.bits() / 8;
            case BFLOAT -> throw new NpyException("bfloat16 has no .npy equivalent; cast to float32 first");
            case FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN -> throw new IllegalStateException(); // isLowBit above
            case STRING -> throw new NpyException("string tensors are not written as .npy (numpy's string arrays are fixed-width or objects)");
            case BOOL -> "|b1";
            case INT -> (dtype.bits() == 8 ? "|i" : "<i") + dtype.bits() / 8;
            case UINT -> (dtype.bits() == 8 ? "|u" : "<u") + dtype.bits() / 8;
        };
    }

    private static String shapeLiteral(int[] shape) {
        if (shape.length == 1) return "(" + shape[0] + ",)";
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            if (i > 0) sb.append(", ");
            sb.append(shape[i]);
        }
        return sb.append(')').toString();
    }
}
