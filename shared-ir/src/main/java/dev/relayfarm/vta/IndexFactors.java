package dev.relayfarm.vta;

/** How far one buffer's index moves per step of the outer and inner loop of a {@link UopLoop}. */
public record IndexFactors(int out, int in) {
    public static final IndexFactors ZERO = new IndexFactors(0, 0);

    public IndexFactors {
        if (out < 0 || in < 0) {
            throw new IllegalArgumentException("index factors must be >= 0, got out=" + out + ", in=" + in);
        }
    }

    public long offset(int i0, int i1) {
        return (long) out * i0 + (long) in * i1;
    }
}
