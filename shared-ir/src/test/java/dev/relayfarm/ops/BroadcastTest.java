package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BroadcastTest {
    private static final Dim N = Dim.sym("n");
    private static final Dim M = Dim.sym("m");

    @Test
    void dimensionRules() {
        assertEquals(Dim.of(3), Broadcast.dim(Dim.of(3), Dim.of(3)));
        assertEquals(Dim.of(3), Broadcast.dim(Dim.of(1), Dim.of(3)));
        assertEquals(Dim.of(3), Broadcast.dim(Dim.of(3), Dim.of(1)));
        assertEquals(Dim.ANY, Broadcast.dim(Dim.ANY, Dim.of(1)));
        assertEquals(Dim.ANY, Broadcast.dim(Dim.of(1), Dim.ANY));
        assertEquals(Dim.of(4), Broadcast.dim(Dim.ANY, Dim.of(4)));
        assertEquals(Dim.of(4), Broadcast.dim(Dim.of(4), Dim.ANY));
        assertEquals(Dim.ANY, Broadcast.dim(Dim.ANY, Dim.ANY));
        assertEquals(N, Broadcast.dim(N, N));
        assertEquals(N, Broadcast.dim(N, Dim.of(1)));
        assertEquals(N, Broadcast.dim(Dim.ANY, N));
        // Provably equal expressions broadcast: n + 1 and 1 + n.
        Dim a = Dims.add(N, Dim.of(1));
        Dim b = new Dim.Bin(Dim.BinOp.ADD, Dim.of(1), N);
        assertEquals(a, Broadcast.dim(a, b));
        assertNull(Broadcast.dim(Dim.of(2), Dim.of(4)));
        assertNull(Broadcast.dim(N, M));
        assertNull(Broadcast.dim(N, Dim.of(4)));
    }

    @Test
    void shapesAlignRight() {
        assertEquals(List.of(Dim.of(5), N, Dim.of(3)),
                Broadcast.shape("add", List.of(Dim.of(5), Dim.of(1), Dim.of(3)), List.of(N, Dim.of(1))));
        assertEquals(List.of(), Broadcast.shape("add", List.of(), List.of()));
        RelationException e = assertThrows(RelationException.class,
                () -> Broadcast.shape("add", List.of(Dim.of(5), Dim.of(2), Dim.of(3)), List.of(Dim.of(4), Dim.of(3))));
        assertEquals("add: shapes (5, 2, 3) and (4, 3) are not broadcast-compatible at dim 1 (2 vs 4)", e.getMessage());
    }

    @Test
    void staticShapes() {
        assertArrayEquals(new int[] {2, 4, 3}, Broadcast.shape("add", new int[] {2, 1, 3}, new int[] {4, 1}));
        assertArrayEquals(new int[] {0, 3}, Broadcast.shape("add", new int[] {0, 3}, new int[] {3}));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Broadcast.shape("add", new int[] {2, 3}, new int[] {4, 3}));
        assertEquals("add: shapes (2, 3) and (4, 3) are not broadcast-compatible at dim 0 (2 vs 4)", e.getMessage());
    }

    @Test
    void loopVisitsEveryOutputElementOnceWithMatchingOffsets() {
        int[] out = {2, 3, 4};
        int[] a = {3, 1};
        int[] b = {2, 1, 4};
        List<String> seen = new ArrayList<>();
        BroadcastLoop.walk(out, new int[][] {a, b}, (n, o, off, st) -> {
            for (int k = 0; k < n; k++) seen.add((o + k) + ":" + (off[0] + k * st[0]) + ":" + (off[1] + k * st[1]));
        });
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) for (int k = 0; k < 4; k++) {
            expected.add(((i * 3 + j) * 4 + k) + ":" + j + ":" + (i * 4 + k));
        }
        assertEquals(expected, seen);
    }

    @Test
    void loopTakesOneRowForSameShapeAndScalarOperands() {
        int[] rows = {0};
        BroadcastLoop.walk(new int[] {2, 3}, new int[][] {{2, 3}, {}, {1, 1}}, (n, o, off, st) -> {
            rows[0]++;
            assertEquals(6, n);
            assertArrayEquals(new int[] {1, 0, 0}, st);
        });
        assertEquals(1, rows[0]);
    }
}
