package dev.relayfarm.vta;

/**
 * A micro-op: base indices for one GEMM or ALU step. For GEMM, {@code dst} is an accumulator entry, {@code src} an
 * input entry and {@code wgt} a weight entry; for ALU, {@code dst} and {@code src} are both accumulator entries and
 * {@code wgt} is unused. Encoded in 32 bits as dst [0,11), src [11,22), wgt [22,32) — enough for the default buffers
 * (2048 accumulator, 2048 input, 1024 weight entries).
 */
public record Uop(int dst, int src, int wgt) {
    public static final int DST_BITS = 11;
    public static final int SRC_BITS = 11;
    public static final int WGT_BITS = 10;

    public int encode() {
        check("dst", dst, DST_BITS);
        check("src", src, SRC_BITS);
        check("wgt", wgt, WGT_BITS);
        return dst | src << DST_BITS | wgt << (DST_BITS + SRC_BITS);
    }

    public static Uop decode(int word) {
        return new Uop(word & (1 << DST_BITS) - 1, word >>> DST_BITS & (1 << SRC_BITS) - 1, word >>> (DST_BITS + SRC_BITS) & (1 << WGT_BITS) - 1);
    }

    private static void check(String field, int value, int bits) {
        if (value < 0 || value >= 1 << bits) {
            throw new IllegalArgumentException("micro-op field " + field + " = " + value + " does not fit " + bits + " bits (0.." + ((1 << bits) - 1) + ")");
        }
    }
}
