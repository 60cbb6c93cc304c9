package dev.relayfarm.ops.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Dim;
import java.util.List;
import org.junit.jupiter.api.Test;

class LayoutTest {
    private static Layout l(String s) {
        return Layout.parse(s);
    }

    @Test
    void parsesPrimalAndSubAxes() {
        Layout nchw8c = l("NCHW8c");
        assertEquals("[N, C, H, W, 8c]", nchw8c.axes().toString());
        assertEquals(5, nchw8c.rank());
        assertEquals(1, nchw8c.indexOf('C'));
        assertEquals(4, nchw8c.subIndexOf('C'));
        assertEquals(8, nchw8c.factorOf('C'));
        assertEquals(0, nchw8c.factorOf('H'));
        assertEquals(-1, nchw8c.indexOf('O'));
        assertTrue(nchw8c.isBlocked());
        assertFalse(l("NHWC").isBlocked());
        assertEquals(l("NCHW"), nchw8c.primal());
        Layout k = l("OIHW8i16o");
        assertEquals(8, k.factorOf('I'));
        assertEquals(16, k.factorOf('O'));
        assertEquals("HIOW", l("HWIO").primalSet());
        assertEquals(l("NCHW16c"), l("NCHW").blocked('C', 16));
        assertEquals(l("NCHW1c"), l("NCHW8c").withFactor('C', 1));
        assertEquals(l("NHWC"), l("NHWC").withFactor('C', 1));
    }

    @Test
    void rejectsBadLayouts() {
        assertEquals("bad layout \"NCHWc\": expected an upper-case axis or a block like 8c at position 4",
                assertThrows(IllegalArgumentException.class, () -> l("NCHWc")).getMessage());
        assertEquals("bad layout \"NCCW\": axis C appears twice", assertThrows(IllegalArgumentException.class, () -> l("NCCW")).getMessage());
        assertEquals("bad layout \"NCHW4c8c\": a block of axis C appears twice",
                assertThrows(IllegalArgumentException.class, () -> l("NCHW4c8c")).getMessage());
        assertEquals("bad layout \"NCHW8d\": block 8d has no primal axis D", assertThrows(IllegalArgumentException.class, () -> l("NCHW8d")).getMessage());
        assertEquals("bad layout \"NCHW0c\": block size must be in [1, 999999999]", assertThrows(IllegalArgumentException.class, () -> l("NCHW0c")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> l("NCHW8c").blocked('C', 4));
        assertThrows(IllegalArgumentException.class, () -> l("NCHW").blocked('O', 4));
    }

    @Test
    void transformsShapes() {
        assertEquals(List.of(Dim.of(1), Dim.of(2), Dim.of(5), Dim.of(5), Dim.of(8)),
                Layout.convertShape(l("NCHW"), dims(1, 16, 5, 5), l("NCHW8c")));
        assertEquals(dims(4, 2, 3, 3, 8, 4), Layout.convertShape(l("OIHW"), dims(16, 16, 3, 3), l("OIHW8i4o")));
        assertEquals(dims(3, 3, 16, 16), Layout.convertShape(l("OIHW8i4o"), dims(4, 2, 3, 3, 8, 4), l("HWIO")));
        assertEquals(dims(1, 4, 5, 5, 4), Layout.convertShape(l("NCHW8c"), dims(1, 2, 5, 5, 8), l("NCHW4c")));
        assertEquals(dims(1, 5, 5, 16), Layout.convertShape(l("NCHW8c"), dims(1, 2, 5, 5, 8), l("NHWC")));
        assertEquals("axis C of size 12 does not divide into blocks of 8 for NCHW8c", assertThrows(IllegalArgumentException.class,
                () -> Layout.convertShape(l("NCHW"), dims(1, 12, 5, 5), l("NCHW8c"))).getMessage());
        assertEquals("block axis 8c of NCHW8c has size 4", assertThrows(IllegalArgumentException.class,
                () -> Layout.convertShape(l("NCHW8c"), dims(1, 2, 5, 5, 4), l("NCHW"))).getMessage());
        assertEquals("NCHW and OIHW must have the same primal axes", assertThrows(IllegalArgumentException.class,
                () -> Layout.convertShape(l("NCHW"), dims(1, 2, 5, 5), l("OIHW"))).getMessage());
        assertEquals(Dim.of(16), l("NCHW8c").extent(dims(1, 2, 5, 5, 8), 'C'));
        assertTrue(l("NCHW8c").canTransformTo(l("NCHW4c")));
        assertTrue(l("NCHW8c").canTransformTo(l("NHWC")));
        assertFalse(l("NCHW8c").canTransformTo(l("NCHW12c")));
        assertFalse(l("NCHW").canTransformTo(l("NCH")));
    }

    private static List<Dim> dims(long... ds) {
        return java.util.Arrays.stream(ds).mapToObj(Dim::of).toList();
    }
}
