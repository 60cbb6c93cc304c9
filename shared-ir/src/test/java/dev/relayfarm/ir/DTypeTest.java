package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class DTypeTest {
    @Test
    void parsesAndPrintsTvmNames() {
        for (String s : new String[] {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
                "uint8", "uint16", "uint32", "uint64", "bool", "float32x4", "int8x16", "boolx8"}) {
            assertEquals(s, DType.parse(s).toString());
            assertTrue(DType.isDType(s));
        }
        assertEquals(DType.FLOAT32, DType.parse("float32"));
        assertEquals(4, DType.parse("float32x4").lanes());
    }

    @Test
    void rejectsUnknownNames() {
        assertFalse(DType.isDType("float8"));
        assertFalse(DType.isDType("Tensor"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DType.parse("int7"));
        assertTrue(e.getMessage().contains("'int7'"));
    }
}
