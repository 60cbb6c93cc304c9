package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.MiniFloats.Format;
import dev.relayfarm.ir.MiniFloats.RoundMode;
import org.junit.jupiter.api.Test;

/** The 8/4-bit float encoders and decoders against hand-checked codes (and ONNX's node-test outputs). */
class MiniFloatsTest {
    private static int sat(Format f, double v) {
        return MiniFloats.encode(f, v, true, RoundMode.UP);
    }

    private static int plain(Format f, double v) {
        return MiniFloats.encode(f, v);
    }

    @Test
    void e4m3fnValuesSpecialsAndOverflow() {
        Format f = Format.E4M3FN;
        assertEquals(0x38, plain(f, 1.0)); // exponent 7 = bias, mantissa 0
        assertEquals(0x7e, plain(f, 448)); // the largest finite: 1.75 * 2^8
        assertEquals(0x7e, plain(f, 464)); // halfway to 480: ties to even (mantissa 110)
        assertEquals(0x7f, plain(f, 464.5)); // rounds beyond 448: NaN without saturation
        assertEquals(0x7e, sat(f, 464.5));
        assertEquals(0x7f, plain(f, Double.POSITIVE_INFINITY));
        assertEquals(0xff, plain(f, Double.NEGATIVE_INFINITY));
        assertEquals(0xfe, sat(f, Double.NEGATIVE_INFINITY));
        assertEquals(0x7f, sat(f, Double.NaN));
        assertEquals(0x01, plain(f, 0x1p-9)); // smallest subnormal
        assertEquals(0x00, plain(f, 0x1p-10)); // halfway to it: even (zero)
        assertEquals(0x01, plain(f, 0x1.0000001p-10));
        assertEquals(0x80, plain(f, -1e-7)); // negative zero exists
        // ONNX test_cast_FLOAT_to_FLOAT8E4M3FN
        assertEquals(0x2f, sat(f, 0.47892547));
        assertEquals(0x35, sat(f, 0.81910545));
        assertEquals(448.0, MiniFloats.decode(f, 0x7e));
        assertEquals(-0x1p-9, MiniFloats.decode(f, 0x81));
        assertTrue(Double.isNaN(MiniFloats.decode(f, 0xff)));
    }

    @Test
    void fnuzFormatsHaveOneNanAndNoNegativeZero() {
        assertEquals(0x7f, sat(Format.E4M3FNUZ, 1e6)); // 240
        assertEquals(240.0, MiniFloats.decode(Format.E4M3FNUZ, 0x7f));
        assertEquals(0x80, plain(Format.E4M3FNUZ, 1e6));
        assertEquals(0x80, plain(Format.E4M3FNUZ, Double.NaN));
        assertEquals(0x80, sat(Format.E5M2FNUZ, -Double.NaN));
        assertEquals(0x00, plain(Format.E4M3FNUZ, -1e-7));
        assertEquals(0x00, plain(Format.E5M2FNUZ, -0.0));
        assertEquals(0xff, sat(Format.E5M2FNUZ, Double.NEGATIVE_INFINITY)); // -57344
        assertEquals(-57344.0, MiniFloats.decode(Format.E5M2FNUZ, 0xff));
        assertTrue(Double.isNaN(MiniFloats.decode(Format.E5M2FNUZ, 0x80)));
        assertEquals(0x37, sat(Format.E4M3FNUZ, 0.47892547)); // ONNX test data
        assertEquals(0x3c, sat(Format.E5M2FNUZ, 0.47892547));
    }

    @Test
    void e5m2HasInfinities() {
        Format f = Format.E5M2;
        assertEquals(0x3c, plain(f, 1.0));
        assertEquals(0x7b, plain(f, 57344));
        assertEquals(0x7b, plain(f, 61439));
        assertEquals(0x7c, plain(f, 61440)); // halfway to 65536: 57344's mantissa 11 is odd, so up, which overflows
        assertEquals(0x7b, sat(f, 61440));
        assertEquals(0x7c, plain(f, Double.POSITIVE_INFINITY));
        assertEquals(0x7b, sat(f, Double.POSITIVE_INFINITY));
        assertEquals(0xfb, sat(f, -1e6));
        assertEquals(0x7e, plain(f, Double.NaN));
        assertEquals(Double.NEGATIVE_INFINITY, MiniFloats.decode(f, 0xfc));
        assertTrue(Double.isNaN(MiniFloats.decode(f, 0x7d)));
        assertEquals(0x1p-16, MiniFloats.decode(f, 0x01)); // smallest subnormal
    }

    @Test
    void float4E2M1AlwaysSaturatesAndHasNoNan() {
        Format f = Format.E2M1FN;
        // ONNX test_cast_FLOAT_to_FLOAT4E2M1: 0.48 0.25 1.05 -3.5 -8 9 1e6 1e-7 NaN inf -inf -4 0.01 -0
        double[] in = {0.48, 0.25, 1.05, -3.5, -8, 9, 1e6, 1e-7, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -4, 0.01, -0.0};
        int[] codes = {0x1, 0x0, 0x2, 0xe, 0xf, 0x7, 0x7, 0x0, 0x8, 0x7, 0xf, 0xe, 0x0, 0x8};
        for (int i = 0; i < in.length; i++) {
            assertEquals(codes[i], plain(f, in[i]), "float4 of " + in[i]);
            assertEquals(codes[i], sat(f, in[i]), "float4 of " + in[i]);
        }
        double[] values = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
        for (int c = 0; c < 8; c++) {
            assertEquals(values[c], MiniFloats.decode(f, c));
            assertEquals(-values[c], MiniFloats.decode(f, c | 8));
        }
    }

    @Test
    void e8m0RoundsToPowersOfTwo() {
        Format f = Format.E8M0FNU;
        // ONNX test_cast_e8m0_FLOAT_to_FLOAT8E8M0 (round_mode up, saturate): 0 0.124 0.25 0.5 1.1 2 4 8
        double[] in = {0, 0.124, 0.25, 0.5, 1.1, 2, 4, 8};
        int[] up = {0x00, 0x7c, 0x7d, 0x7e, 0x80, 0x80, 0x81, 0x82};
        for (int i = 0; i < in.length; i++) assertEquals(up[i], sat(f, in[i]), "e8m0 of " + in[i]);
        assertEquals(0x7f, MiniFloats.encode(f, 1.1, true, RoundMode.DOWN));
        assertEquals(0x7f, MiniFloats.encode(f, 1.49, true, RoundMode.NEAREST));
        assertEquals(0x80, MiniFloats.encode(f, 1.5, true, RoundMode.NEAREST));
        assertEquals(0x80, MiniFloats.encode(f, -2.0, true, RoundMode.UP)); // the magnitude
        assertEquals(0xff, plain(f, Double.NaN));
        assertEquals(0xfe, sat(f, Double.POSITIVE_INFINITY));
        assertEquals(0xff, plain(f, Double.POSITIVE_INFINITY));
        assertEquals(0xff, plain(f, 0x1.8p127)); // rounds up past 2^127
        assertEquals(0xfe, sat(f, 0x1.8p127));
        assertEquals(0x1p-127, MiniFloats.decode(f, 0));
        assertTrue(Double.isNaN(MiniFloats.decode(f, 0xff)));
    }

    @Test
    void everyCodeRoundTrips() {
        for (Format f : Format.values()) {
            int codes = f == Format.E2M1FN ? 16 : 256;
            for (int c = 0; c < codes; c++) {
                double v = MiniFloats.decode(f, c);
                if (Double.isNaN(v)) continue;
                int back = plain(f, v);
                // the FNUZ formats have no -0 (0x80 is NaN); everything else comes back as itself
                assertEquals(c, back, f + " code " + Integer.toHexString(c) + " = " + v);
            }
        }
    }

    @Test
    void dtypeNamesParseAndPrint() {
        for (String name : new String[] {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
            "int4", "uint4", "int2", "uint2"}) {
            DType t = DType.parse(name);
            assertEquals(name, t.toString());
            assertTrue(DType.isDType(name));
            assertEquals(1, t.storageBytes());
            assertTrue(t.isLowBit());
        }
        assertTrue(!DType.isDType("float8") && !DType.isDType("float4") && !DType.isDType("int4x4") && !DType.isDType("float8_e4m3"));
        assertEquals(Format.E5M2, MiniFloats.format(DType.FLOAT8_E5M2));
    }

    @Test
    void ndArrayStoresOneCodeOrValuePerByte() {
        NDArray a = NDArray.fromDoubles(DType.FLOAT8_E4M3FN, new int[] {3}, new double[] {1.0, 1000, -0.3});
        assertEquals(0x38, a.byteData()[0] & 0xff);
        assertTrue(Double.isNaN(a.getDouble(1))); // setDouble does not saturate
        assertEquals(-0.3125, a.getDouble(2));
        NDArray i4 = NDArray.fromLongs(DType.INT4, new int[] {4}, new long[] {7, 8, -9, 15});
        assertEquals(java.util.List.of(7L, -8L, 7L, -1L), java.util.List.of(i4.getLong(0), i4.getLong(1), i4.getLong(2), i4.getLong(3)));
        NDArray u2 = NDArray.fromLongs(DType.UINT2, new int[] {3}, new long[] {3, 4, -1});
        assertEquals(java.util.List.of(3L, 0L, 3L), java.util.List.of(u2.getLong(0), u2.getLong(1), u2.getLong(2)));
        assertEquals(1, u2.toBytes().length / 3);
    }
}
