package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

class GridSampleTest {
    private static final String OP = "image.grid_sample";
    private static final NDArray X = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);

    /** A channel-first grid [1, 2, 1, points] from the x and y coordinates of each point. */
    private static NDArray grid(double[] xs, double[] ys) {
        double[] g = new double[xs.length * 2];
        System.arraycopy(xs, 0, g, 0, xs.length);
        System.arraycopy(ys, 0, g, xs.length, ys.length);
        return arr(new int[] {1, 2, 1, xs.length}, g);
    }

    @Test
    void relation() {
        assertEquals("Tensor[(n, 3, 5, 6), float32]", inferText(OP, attrs(), f32("n", 3, 10, 10), f32("n", 2, 5, 6)));
        assertEquals("Tensor[(2, 3, 4, 5, 6), float32]", inferText(OP, attrs("layout", "NCDHW"), f32(2, 3, 7, 8, 9), f32(2, 3, 4, 5, 6)));
        assertTrue(defers(OP, attrs(), hole(), f32(1, 2, 3, 3)));
        assertEquals("image.grid_sample: grid must have 2 coordinates in axis 1, got Tensor[(1, 3, 5, 6), float32]",
                relationError(OP, attrs(), f32(1, 3, 10, 10), f32(1, 3, 5, 6)));
        assertEquals("image.grid_sample: data and grid must have the same batch, got Tensor[(2, 3, 10, 10), float32] and Tensor[(1, 2, 5, 6), float32]",
                relationError(OP, attrs(), f32(2, 3, 10, 10), f32(1, 2, 5, 6)));
        assertEquals("image.grid_sample: data must have rank 5, got Tensor[(1, 3, 10, 10), float32]",
                relationError(OP, attrs("layout", "NCDHW"), f32(1, 3, 10, 10), f32(1, 3, 5, 6)));
        assertEquals("image.grid_sample: bicubic is only supported for NCHW, not NCDHW",
                relationError(OP, attrs("layout", "NCDHW", "method", "bicubic"), f32(1, 3, 2, 2, 2), f32(1, 3, 1, 1, 1)));
        assertEquals("image.grid_sample: padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"wrap\"",
                relationError(OP, attrs("padding_mode", "wrap"), f32(1, 3, 4, 4), f32(1, 2, 1, 1)));
    }

    @Test
    void bilinearAndPadding() {
        // aligned corners: ±1 are the corner pixel centers
        assertValues(run1(OP, attrs("align_corners", true), X, grid(new double[] {-1, 1, 0, 1}, new double[] {-1, 1, 0, -1})),
                new int[] {1, 1, 1, 4}, 1, 4, 2.5, 2);
        // unaligned, (-1, -1) is the outer corner (-0.5, -0.5); (2, -1) lies at x = 2.5, past the right edge
        NDArray g = grid(new double[] {-1, 2}, new double[] {-1, -1});
        assertValues(run1(OP, attrs(), X, g), new int[] {1, 1, 1, 2}, 0.25, 0);
        assertValues(run1(OP, attrs("padding_mode", "border"), X, g), new int[] {1, 1, 1, 2}, 1, 2);
        // reflection folds 2.5 about 1.5 to 0.5; the tap at row -1 reflects to row 0
        assertValues(run1(OP, attrs("padding_mode", "reflection"), X, g), new int[] {1, 1, 1, 2}, 1, 1.5);
    }

    @Test
    void nearest() {
        // unaligned, 0 maps to 0.5, which rounds half to even: 0; 0.5 maps to 1
        assertValues(run1(OP, attrs("method", "nearest"), X, grid(new double[] {0, 0.5, 0, 3}, new double[] {0, 0.5, 0.5, 0})),
                new int[] {1, 1, 1, 4}, 1, 4, 3, 0);
        assertValues(run1(OP, attrs("method", "nearest", "padding_mode", "border"), X, grid(new double[] {3}, new double[] {0})),
                new int[] {1, 1, 1, 1}, 2);
    }

    @Test
    void bicubic() {
        // Keys' kernel at alpha -0.75 and t = 0.5 weighs the taps -0.09375, 0.59375, 0.59375, -0.09375
        NDArray spike = arr(new int[] {1, 1, 1, 4}, 0, 0, 1, 0);
        assertValues(run1(OP, attrs("method", "bicubic", "align_corners", true), spike, grid(new double[] {0}, new double[] {0})),
                new int[] {1, 1, 1, 1}, 0.59375);
        NDArray ramp = arr(new int[] {1, 1, 1, 4}, 0, 1, 2, 3);
        assertValues(run1(OP, attrs("method", "bicubic", "align_corners", true), ramp, grid(new double[] {0}, new double[] {0})),
                new int[] {1, 1, 1, 1}, 1.5);
        // with border padding the weights sum to one everywhere, so a constant image stays constant
        NDArray flat = arr(new int[] {1, 1, 2, 2}, 5, 5, 5, 5);
        NDArray out = run1(OP, attrs("method", "bicubic", "padding_mode", "border"), flat, grid(new double[] {-1, 0.3, 1.7}, new double[] {0.9, -0.4, 1}));
        for (int i = 0; i < 3; i++) assertEquals(5, out.getDouble(i), 1e-5);
    }

    @Test
    void volumetric() {
        NDArray cube = arr(new int[] {1, 1, 2, 2, 2}, 0, 1, 2, 3, 4, 5, 6, 7);
        // channels x, y, z; (1, -1, 1) is depth 1, row 0, column 1
        NDArray g = arr(new int[] {1, 3, 1, 1, 2}, 0, 1, 0, -1, 0, 1);
        assertValues(run1(OP, attrs("layout", "NCDHW", "align_corners", true), cube, g), new int[] {1, 1, 1, 1, 2}, 3.5, 5);
        assertValues(run1(OP, attrs("layout", "NCDHW", "method", "nearest", "align_corners", true), cube, g), new int[] {1, 1, 1, 1, 2}, 0, 5);
    }
}
