package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.List;

/**
 * ONNX AffineGrid: the sampling grid of an affine transform, for 2-D (theta [N, 2, 3], size
 * [N, C, H, W] → grid [N, H, W, 2]) and 3-D (theta [N, 3, 4], size [N, C, D, H, W] → [N, D, H, W, 3]).
 * The base grid of normalized coordinates (x fastest, then y, z, with a trailing 1) is a constant,
 * since the size must be constant; each batch's grid is {@code base · thetaᵀ}.
 *
 * <p>ONNX GridSample (opset 16; 20 renamed the modes linear/cubic and added 5-D) is image.grid_sample
 * after moving the grid's coordinate axis from last to second, TVM's layout.
 */
final class GridConverters {
    private GridConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("AffineGrid", GridConverters::affineGrid);
        b.add("GridSample", GridConverters::gridSample);
    }

    private static List<Expr> affineGrid(OnnxNode n) {
        long[] size = n.constantInts(1, "size");
        boolean alignCorners = n.attrInt("align_corners", 0) != 0;
        int spatial = size.length - 2;
        if (spatial != 2 && spatial != 3) throw n.unsupported("size must have 4 or 5 values, got " + size.length);
        TensorType theta = n.inputType(0);
        if (theta.rank() != 3) throw n.unsupported("theta must be [N, " + spatial + ", " + (spatial + 1) + "], got " + theta);
        // Output spatial dims in order (D,) H, W; coordinates in order x, y(, z).
        int[] dims = new int[spatial];
        for (int i = 0; i < spatial; i++) dims[i] = (int) size[2 + i];
        int points = 1;
        for (int d : dims) points *= d;
        double[] base = new double[points * (spatial + 1)];
        for (int p = 0; p < points; p++) {
            int rest = p;
            for (int i = spatial - 1; i >= 0; i--) { // i = spatial-1 is W (x), then H (y), then D (z)
                int idx = rest % dims[i];
                rest /= dims[i];
                int coord = spatial - 1 - i;
                base[p * (spatial + 1) + coord] = normalized(idx, dims[i], alignCorners);
            }
            base[p * (spatial + 1) + spatial] = 1;
        }
        DType dt = theta.dtype();
        long batch = size[0];
        Expr b = OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {1, points, spatial + 1}, base));
        b = n.call("broadcast_to", List.of(b), "shape", new long[] {batch, points, spatial + 1});
        Expr grid = n.call("nn.batch_matmul", List.of(b, n.input(0)), "transpose_a", false, "transpose_b", true);
        long[] outShape = new long[spatial + 2];
        outShape[0] = batch;
        for (int i = 0; i < spatial; i++) outShape[1 + i] = dims[i];
        outShape[spatial + 1] = spatial;
        return List.of(n.call("reshape", List.of(grid), "newshape", outShape));
    }

    /** Pixel i of n in [-1, 1]: corner centers at ±1 when aligned, else pixel centers of n equal cells. */
    private static double normalized(int i, int n, boolean alignCorners) {
        if (alignCorners) return n == 1 ? 0 : -1 + 2.0 * i / (n - 1);
        return -1 + (2.0 * i + 1) / n;
    }

    private static List<Expr> gridSample(OnnxNode n) {
        int rank = n.inputRank(0);
        if (rank != 4 && rank != 5) throw n.unsupported("X must be 4-D or 5-D, got rank " + rank);
        if (n.inputRank(1) != rank) throw n.unsupported("grid must have the rank of X (" + rank + "), got " + n.inputRank(1));
        String mode = n.attrString("mode", "bilinear");
        String method = switch (mode) {
            case "bilinear", "linear" -> "bilinear";
            case "bicubic", "cubic" -> "bicubic";
            case "nearest" -> "nearest";
            default -> throw n.unsupported("mode \"" + mode + "\" is not one of linear, nearest, cubic (bilinear, bicubic before opset 20)");
        };
        if (rank == 5 && method.equals("bicubic")) throw n.unsupported("cubic mode is only defined for 4-D input");
        String padding = n.attrString("padding_mode", "zeros");
        if (!List.of("zeros", "border", "reflection").contains(padding)) {
            throw n.unsupported("padding_mode \"" + padding + "\" is not one of zeros, border, reflection");
        }
        // [N, (D,) H, W, k] -> [N, k, (D,) H, W]
        long[] perm = new long[rank];
        perm[1] = rank - 1;
        for (int d = 2; d < rank; d++) perm[d] = d - 1;
        Expr grid = n.call("transpose", List.of(n.input(1)), "axes", perm);
        return List.of(n.call("image.grid_sample", List.of(n.input(0), grid), "method", method, "layout", rank == 4 ? "NCHW" : "NCDHW",
                "padding_mode", padding, "align_corners", n.attrInt("align_corners", 0) != 0));
    }
}
