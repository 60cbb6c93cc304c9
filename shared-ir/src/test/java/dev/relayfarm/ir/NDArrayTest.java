package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class NDArrayTest {
    @Test
    void everyDtypeRoundTripsThroughLittleEndianBytes() {
        for (String name : new String[] {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
                "uint8", "uint16", "uint32", "uint64", "bool", "float32x4"}) {
            DType dt = DType.parse(name);
            NDArray a = NDArray.fromDoubles(dt, new int[] {2, 3}, lanes(dt, new double[] {0, 1, 2, 3, 4, 5}));
            NDArray b = NDArray.fromBytes(dt, new int[] {2, 3}, a.toBytes());
            assertTrue(a.contentEquals(b), name);
            assertEquals(a.contentHash(), b.contentHash(), name);
            assertEquals(a.sha256(), b.sha256(), name);
            assertEquals(6L * dt.lanes() * dt.storageBytes(), a.byteSize(), name);
        }
    }

    private static double[] lanes(DType dt, double[] v) {
        double[] out = new double[v.length * dt.lanes()];
        for (int i = 0; i < out.length; i++) out[i] = dt.isBool() ? (i % 2) : v[i / dt.lanes()];
        return out;
    }

    @Test
    void unsignedValuesReadAsUnsigned() {
        NDArray a = NDArray.fromLongs(DType.UINT8, new int[] {2}, new long[] {255, 7});
        assertEquals(255, a.getLong(0));
        assertEquals(255.0, a.getDouble(0));
        NDArray b = NDArray.fromLongs(DType.UINT64, new int[] {1}, new long[] {-1});
        assertEquals(0x1p64, b.getDouble(0));
        NDArray c = NDArray.fromDoubles(DType.UINT64, new int[] {1}, new double[] {0x1p63});
        assertEquals(Long.MIN_VALUE, c.longData()[0]);
    }

    @Test
    void narrowIntegersWrapLikeACast() {
        NDArray a = NDArray.fromLongs(DType.INT8, new int[] {2}, new long[] {200, -129});
        assertEquals(-56, a.getLong(0));
        assertEquals(127, a.getLong(1));
    }

    @Test
    void halfPrecisionConverts() {
        NDArray h = NDArray.fromDoubles(DType.FLOAT16, new int[] {1}, new double[] {1.5});
        assertEquals(1.5, h.getDouble(0));
        NDArray bf = NDArray.fromDoubles(DType.BFLOAT16, new int[] {1}, new double[] {-2.25});
        assertEquals(-2.25, bf.getDouble(0));
    }

    @Test
    void storageMustFitDtypeAndShape() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NDArray.wrap(DType.FLOAT32, new int[] {2, 2}, new float[3]));
        assertTrue(e.getMessage().contains("needs 4 elements, got 3"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(DType.INT32, new int[] {1}, new float[1]));
        assertTrue(e.getMessage().contains("int32 needs int[]"), e.getMessage());
    }

    @Test
    void nanWithSameBitsIsContentEqual() {
        NDArray a = NDArray.scalar(Float.NaN);
        NDArray b = NDArray.scalar(Float.NaN);
        assertTrue(a.contentEquals(b));
        assertFalse(a.contentEquals(NDArray.scalar(1f)));
        assertFalse(NDArray.scalar(1f).contentEquals(NDArray.scalar(1.0)));
    }
}
