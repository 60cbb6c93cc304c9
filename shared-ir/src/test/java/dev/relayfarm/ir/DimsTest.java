package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class DimsTest {
    private final Dim n = Dim.sym("n");
    private final Dim m = Dim.sym("m");

    @Test
    void foldsConstants() {
        assertEquals(Dim.of(7), Dims.add(Dim.of(3), Dim.of(4)));
        assertEquals(Dim.of(-2), Dims.div(Dim.of(-3), Dim.of(2)));
        assertEquals(Dim.of(1), Dims.mod(Dim.of(-3), Dim.of(2)));
    }

    @Test
    void keepsSumsInCanonicalLinearForm() {
        assertEquals("2 * n", Dims.add(n, n).toString());
        assertEquals(n, Dims.sub(Dims.add(n, Dim.of(1)), Dim.of(1)));
        assertEquals("m + 3 * n - 4", Dims.add(Dims.mul(Dim.of(3), n), Dims.sub(m, Dim.of(4))).toString());
        assertEquals("n + 2", Dims.div(Dims.add(Dims.mul(n, Dim.of(2)), Dim.of(4)), Dim.of(2)).toString());
        assertTrue(Dims.provablyEqual(Dims.add(n, m), Dims.add(m, n)));
        assertFalse(Dims.provablyEqual(n, m));
    }

    @Test
    void inexactDivisionStaysOpaqueWithParentheses() {
        assertEquals("(n - 3) / 2 + 1", Dims.add(Dims.div(Dims.sub(n, Dim.of(3)), Dim.of(2)), Dim.of(1)).toString());
        assertEquals("n * m", Dims.mul(n, m).toString());
    }

    @Test
    void anyAbsorbsAndIsCompatibleButNeverProvablyEqual() {
        assertEquals(Dim.ANY, Dims.add(Dim.ANY, Dim.of(1)));
        assertEquals(Dim.ANY, Dims.mul(n, Dim.ANY));
        assertTrue(Dims.compatible(Dim.ANY, Dim.of(3)));
        assertFalse(Dims.provablyEqual(Dim.ANY, Dim.ANY));
        assertFalse(Dims.compatible(Dim.of(2), Dim.of(3)));
    }

    @Test
    void divisionByZeroIsReported() {
        assertThrows(ArithmeticException.class, () -> Dims.div(Dim.of(1), Dim.of(0)));
    }
}
