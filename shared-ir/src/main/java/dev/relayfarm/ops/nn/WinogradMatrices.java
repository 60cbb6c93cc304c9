package dev.relayfarm.ops.nn;

/**
 * The transform matrices of Winograd's minimal filtering F(m x m, 3 x 3) (Lavin and Gray, "Fast Algorithms
 * for Convolutional Neural Networks", 2016, section 4; the same matrices as their wincnn tool and TVM's
 * {@code winograd_util}): {@code Y = A^T [(G g G^T) ⊙ (B^T d B)] A} for a 3x3 filter {@code g} and an input
 * tile {@code d} of {@code alpha = m + 2} by {@code alpha}.
 * <ul>
 *   <li>F(2x2, 3x3), alpha 4: Cook-Toom interpolation points 0, 1, -1 (and the point at infinity).
 *   <li>F(4x4, 3x3), alpha 6: points 0, 1, -1, 2, -2 (and infinity); G's rows are scaled so that B and A
 *       have small integer entries (Lavin and Gray's equations 9-11 extended as in their wincnn).
 * </ul>
 * Each matrix is stated row by row; {@code bt} is B^T ({@code alpha x alpha}), {@code g} is G ({@code alpha x 3}),
 * {@code at} is A^T ({@code m x alpha}).
 */
public final class WinogradMatrices {
    private WinogradMatrices() {}

    /** The output tile sizes there are matrices for. */
    public static boolean supports(int m) {
        return m == 2 || m == 4;
    }

    private static final double[][] BT2 = {
            {1, 0, -1, 0},
            {0, 1, 1, 0},
            {0, -1, 1, 0},
            {0, 1, 0, -1}};
    private static final double[][] G2 = {
            {1, 0, 0},
            {0.5, 0.5, 0.5},
            {0.5, -0.5, 0.5},
            {0, 0, 1}};
    private static final double[][] AT2 = {
            {1, 1, 1, 0},
            {0, 1, -1, -1}};

    private static final double[][] BT4 = {
            {4, 0, -5, 0, 1, 0},
            {0, -4, -4, 1, 1, 0},
            {0, 4, -4, -1, 1, 0},
            {0, -2, -1, 2, 1, 0},
            {0, 2, -1, -2, 1, 0},
            {0, 4, 0, -5, 0, 1}};
    private static final double[][] G4 = {
            {1.0 / 4, 0, 0},
            {-1.0 / 6, -1.0 / 6, -1.0 / 6},
            {-1.0 / 6, 1.0 / 6, -1.0 / 6},
            {1.0 / 24, 1.0 / 12, 1.0 / 6},
            {1.0 / 24, -1.0 / 12, 1.0 / 6},
            {0, 0, 1}};
    private static final double[][] AT4 = {
            {1, 1, 1, 1, 1, 0},
            {0, 1, -1, 2, -2, 0},
            {0, 1, 1, 4, 4, 0},
            {0, 1, -1, 8, -8, 1}};

    private static void check(int m) {
        if (!supports(m)) throw new IllegalArgumentException("Winograd tile size must be 2 or 4, got " + m);
    }

    /** B^T, {@code alpha x alpha}. */
    public static double[][] bt(int m) {
        check(m);
        return m == 2 ? BT2 : BT4;
    }

    /** G, {@code alpha x 3}. */
    public static double[][] g(int m) {
        check(m);
        return m == 2 ? G2 : G4;
    }

    /** A^T, {@code m x alpha}. */
    public static double[][] at(int m) {
        check(m);
        return m == 2 ? AT2 : AT4;
    }
}
