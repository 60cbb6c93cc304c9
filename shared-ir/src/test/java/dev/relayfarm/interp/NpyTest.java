package dev.relayfarm.interp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixtures under {@code src/test/resources/npy/} were written by NumPy 2.4:
 * <pre>
 * np.save('f4_2x3.npy', np.arange(6, dtype='&lt;f4').reshape(2,3) * 0.5)
 * np.save('i4_be.npy', np.array([[1, -2], [300000, -7]], dtype='&gt;i4'))
 * np.save('f8_be_scalar.npy', np.array(3.25, dtype='&gt;f8'))
 * np.save('f2_3.npy', np.array([1.5, -2.0, 65504.0], dtype='&lt;f2'))
 * np.save('b1_4.npy', np.array([True, False, False, True]))
 * np.save('u8_2.npy', np.array([2**64-1, 5], dtype='&lt;u8'))
 * np.save('i1_3.npy', np.array([-128, 0, 127], dtype='i1'))
 * np.save('u2_2.npy', np.array([65535, 1], dtype='&lt;u2'))
 * np.save('i8_empty.npy', np.zeros((0, 3), dtype='&lt;i8'))
 * format.write_array(f, np.array([1.0, 2.0], dtype='&lt;f4'), version=(2,0))   # f4_v2.npy
 * format.write_array(f, np.array([[7.0]], dtype='&lt;f4'), version=(3,0))      # f4_v3.npy
 * np.save('fortran.npy', np.asfortranarray(np.arange(6, dtype='&lt;f4').reshape(2,3)))
 * np.save('structured.npy', np.zeros(2, dtype=[('a','&lt;f4'),('b','&lt;i4')]))
 * </pre>
 */
class NpyTest {
    private static byte[] fixture(String name) throws IOException {
        try (InputStream in = NpyTest.class.getResourceAsStream("/npy/" + name)) {
            if (in == null) throw new IllegalStateException("missing fixture " + name);
            return in.readAllBytes();
        }
    }

    private static NDArray read(String name) throws IOException {
        return Npy.fromBytes(fixture(name));
    }

    private static double[] doubles(NDArray a) {
        double[] out = new double[a.elementCount()];
        for (int i = 0; i < out.length; i++) out[i] = a.getDouble(i);
        return out;
    }

    @Test
    void readsFloat32MatrixAndWritesTheIdenticalBytes() throws IOException {
        NDArray a = read("f4_2x3.npy");
        assertEquals(DType.FLOAT32, a.dtype());
        assertArrayEquals(new int[] {2, 3}, a.shape());
        assertArrayEquals(new double[] {0, 0.5, 1, 1.5, 2, 2.5}, doubles(a));
        assertArrayEquals(fixture("f4_2x3.npy"), Npy.toBytes(a), "byte-identical to numpy.save");
    }

    @Test
    void readsBigEndianData() throws IOException {
        NDArray i = read("i4_be.npy");
        assertEquals(DType.INT32, i.dtype());
        assertArrayEquals(new int[] {1, -2, 300000, -7}, i.intData());
        NDArray d = read("f8_be_scalar.npy");
        assertEquals(DType.FLOAT64, d.dtype());
        assertEquals(0, d.rank());
        assertEquals(3.25, d.getDouble(0));
    }

    @Test
    void readsEveryOtherDtypeAndWritesNumpyIdenticalBytes() throws IOException {
        NDArray h = read("f2_3.npy");
        assertEquals(DType.FLOAT16, h.dtype());
        assertArrayEquals(new double[] {1.5, -2.0, 65504.0}, doubles(h));
        NDArray b = read("b1_4.npy");
        assertEquals(DType.BOOL, b.dtype());
        assertArrayEquals(new byte[] {1, 0, 0, 1}, b.byteData());
        NDArray u = read("u8_2.npy");
        assertEquals(DType.UINT64, u.dtype());
        assertArrayEquals(new long[] {-1L, 5}, u.longData());
        NDArray i1 = read("i1_3.npy");
        assertArrayEquals(new byte[] {-128, 0, 127}, i1.byteData());
        NDArray u2 = read("u2_2.npy");
        assertEquals(65535, u2.getLong(0));
        NDArray empty = read("i8_empty.npy");
        assertArrayEquals(new int[] {0, 3}, empty.shape());
        assertEquals(DType.INT64, empty.dtype());
        for (String name : List.of("f2_3.npy", "b1_4.npy", "u8_2.npy", "i1_3.npy", "u2_2.npy", "i8_empty.npy")) {
            assertArrayEquals(fixture(name), Npy.toBytes(read(name)), name);
        }
    }

    @Test
    void readsVersionTwoAndThreeHeaders() throws IOException {
        assertArrayEquals(new double[] {1, 2}, doubles(read("f4_v2.npy")));
        NDArray v3 = read("f4_v3.npy");
        assertArrayEquals(new int[] {1, 1}, v3.shape());
        assertEquals(7.0, v3.getDouble(0));
    }

    @Test
    void rejectsFortranOrderStructuredDtypesAndGarbage() throws IOException {
        Npy.NpyException f = assertThrows(Npy.NpyException.class, () -> read("fortran.npy"));
        assertEquals("fortran_order=True is not supported: save a C-ordered array (numpy.ascontiguousarray(a))", f.getMessage());
        Npy.NpyException s = assertThrows(Npy.NpyException.class, () -> read("structured.npy"));
        assertTrue(s.getMessage().startsWith("structured or missing dtype"), s.getMessage());
        Npy.NpyException magic = assertThrows(Npy.NpyException.class, () -> Npy.fromBytes("hello world!".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("not a .npy file (missing the \\x93NUMPY magic)", magic.getMessage());
        byte[] truncated = java.util.Arrays.copyOf(fixture("f4_2x3.npy"), 140);
        Npy.NpyException t = assertThrows(Npy.NpyException.class, () -> Npy.fromBytes(truncated));
        assertEquals("truncated data: shape [2, 3] of <f4 needs 24 bytes, file has 12", t.getMessage());
    }

    @Test
    void roundTripsEveryDtypeThroughAFile(@TempDir Path dir) throws IOException {
        List<DType> dtypes = List.of(DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.INT8, DType.INT16, DType.INT32,
                DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64, DType.BOOL);
        for (DType dt : dtypes) {
            NDArray a = NDArray.fromDoubles(dt, new int[] {2, 2}, new double[] {0, 1, 2, 3});
            Path file = dir.resolve(dt + ".npy");
            Npy.write(file, a);
            byte[] bytes = Files.readAllBytes(file);
            assertEquals(0, (bytes.length - a.byteSize()) % 64, dt + ": header is padded to 64 bytes");
            NDArray back = Npy.read(file);
            assertTrue(a.contentEquals(back), dt + ": " + back);
        }
        NDArray scalar = NDArray.scalar(2.5f);
        NDArray back = Npy.fromBytes(Npy.toBytes(scalar));
        assertEquals(0, back.rank());
        assertEquals(2.5, back.getDouble(0));
        assertTrue(new String(Npy.toBytes(scalar), StandardCharsets.ISO_8859_1).contains("'shape': (), }"));
    }

    @Test
    void refusesDtypesWithoutANumpySpelling() {
        Npy.NpyException e = assertThrows(Npy.NpyException.class, () -> Npy.toBytes(NDArray.zeros(DType.BFLOAT16, 2)));
        assertEquals("bfloat16 has no .npy equivalent; cast to float32 first", e.getMessage());
    }
}
