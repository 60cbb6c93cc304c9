package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code reinterpret} (ONNX BitCast) kernels against the interpreter, byte for byte: every pair of
 * same-width dtypes the operator allows (the 8-bit floats by their codes), on random bit patterns (NaN
 * payloads and subnormals included).
 */
class BitCastComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases().bitExact();

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        String[][] widths = {
            {"float32", "int32", "uint32"},
            {"float64", "int64", "uint64"},
            {"float16", "bfloat16", "int16", "uint16"},
            {"int8", "uint8", "bool", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"},
        };
        for (String[] group : widths) {
            for (String from : group) {
                for (String to : group) {
                    if (from.equals(to)) continue;
                    // a bool holds 0 or 1; other bytes are not bools the interpreter can represent
                    OpKernelCases.Gen g = from.equals("bool") ? null : to.equals("bool") ? OpKernelCases.ints(0, 1) : BitCastComputesTest::randomBits;
                    CASES.add("fn (%x: Tensor[(7, 65), " + from + "]) { reinterpret(%x, dtype=\"" + to + "\") }", g);
                }
            }
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void reinterpretMatchesTheInterpreterBitForBit() {
        CASES.assertAllMatch(20261127L);
    }

    private static NDArray randomBits(Random rnd, DType t, int[] shape) {
        byte[] b = new byte[NDArray.elementCount(t, shape) * t.storageBytes()];
        rnd.nextBytes(b);
        return NDArray.fromBytes(t, shape, b);
    }
}
