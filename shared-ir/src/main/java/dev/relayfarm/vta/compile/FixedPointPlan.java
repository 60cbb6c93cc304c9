package dev.relayfarm.vta.compile;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Realize's fixed-point requantize {@code y = (int64(a)·m0[c] + 2^(sh[c]-1)) >> sh[c]} computed EXACTLY with the
 * simulator's 32-bit ALU (MIN, MAX, ADD, SHR, MUL, wrapping at 32 bits), for the values the following clip to
 * [qmin, qmax] can tell apart. The 62-bit product does not fit a lane, so:
 *
 * <ol>
 *   <li>one shift S = max sh[c] for all channels: {@code M[c] = m0[c]·2^(S-sh[c])} leaves y unchanged
 *       (numerator and denominator scaled alike) and makes every shift amount an immediate;
 *   <li>saturate early: y is non-decreasing in a, so clamping a to [lo[c], hi[c]] (hi the least a with y ≥ qmax,
 *       lo the greatest with y ≤ qmin) changes y only where the clip would anyway; now |a| ≤ B;
 *   <li>long multiplication with carries over the digits of M below bit S, low to high, each at most k bits wide:
 *       {@code c = (c + a·d_j + round_j) >> w_j} with the rounding bit 2^(S-1) added in its digit. Nested floor
 *       division makes this exactly {@code floor((a·(M mod 2^S) + 2^(S-1)) / 2^S)}; k is the widest digit for which
 *       every intermediate provably stays inside int32, given B;
 *   <li>{@code y = c + a·(M >> S)}, the part of the multiplier at or above 2^S (non-zero when m ≥ 1).
 * </ol>
 *
 * Zero digits cost only a shift and are merged (up to 30 bits per shift). What it cannot do: a multiplier so small
 * that the early-saturation bound B leaves no digit width (below about 2^-23 for an int8 output, 2^-22 for uint8),
 * which {@link #of} rejects with the reason; TVM's VTA instead restricts requantize to a power-of-two shift, which
 * this plan covers as the one-digit case.
 *
 * @param shift      S, the common shift
 * @param lo         per channel, the early-saturation lower bound of a
 * @param hi         per channel, the upper bound
 * @param segments   the digits of M below 2^S, lowest first
 * @param high       per channel, {@code M >> S}
 * @param withinClip whether every result for a in [lo, hi] already lies in [qmin, qmax] (true when no channel's
 *                   multiplier exceeds 1: then y(hi) = qmax and y(lo) = qmin), so the clip after it is redundant
 */
public record FixedPointPlan(int shift, int[] lo, int[] hi, List<Segment> segments, int[] high, boolean withinClip) {

    /** One digit of the long multiplication: w bits of M per channel (null when all are zero), the rounding add. */
    public record Segment(int width, int[] digit, int round) {
        public Segment {
            digit = digit == null ? null : digit.clone();
        }

        /** A copy (null when every channel's digit is zero). */
        @Override
        public int[] digit() {
            return digit == null ? null : digit.clone();
        }

        public boolean multiplies() {
            return digit != null;
        }
    }

    public FixedPointPlan {
        segments = List.copyOf(segments);
        lo = lo.clone();
        hi = hi.clone();
        high = high.clone();
    }

    @Override
    public int[] lo() {
        return lo.clone();
    }

    @Override
    public int[] hi() {
        return hi.clone();
    }

    @Override
    public int[] high() {
        return high.clone();
    }

    public boolean hasHigh() {
        for (int h : high) {
            if (h != 0) return true;
        }
        return false;
    }

    /** Realize's int64 formula, the reference. */
    public static long reference(long a, long m0, long sh) {
        return (a * m0 + (1L << (sh - 1))) >> sh;
    }

    public static FixedPointPlan of(EpilogueOp.Requantize r) {
        long[] m0 = r.m0(), sh = r.shift();
        int n = m0.length;
        long common = 1;
        for (int c = 0; c < n; c++) {
            if (sh[c] < 1 || sh[c] > 62 || m0[c] < 0 || m0[c] >= 1L << 31) {
                throw new IllegalArgumentException("requantize channel " + c + ": m0 = " + m0[c] + ", shift = " + sh[c]
                        + " is not Realize's fixed point (m0 in [0, 2^31), shift in [1, 62])");
            }
            if (m0[c] != 0) common = Math.max(common, sh[c]);
        }
        int s = (int) common;
        BigInteger[] m = new BigInteger[n];
        int[] lo = new int[n], hi = new int[n], high = new int[n];
        long bound = 0;
        BigInteger two = BigInteger.TWO;
        BigInteger halfS = two.pow(s - 1), full = two.pow(s);
        for (int c = 0; c < n; c++) {
            // m0 = 0 is Realize's "below 2^-31" case, (0 + 1) >> 1 = 0 for every a
            m[c] = m0[c] == 0 ? BigInteger.ZERO : BigInteger.valueOf(m0[c]).shiftLeft(s - (int) sh[c]);
            if (m[c].signum() == 0) continue;
            BigInteger hiB = ceilDiv(BigInteger.valueOf(r.qmax()).multiply(full).subtract(halfS), m[c]);
            BigInteger loB = ceilDiv(BigInteger.valueOf(r.qmin() + 1L).multiply(full).subtract(halfS), m[c]).subtract(BigInteger.ONE);
            hi[c] = clampInt(hiB);
            lo[c] = clampInt(loB);
            bound = Math.max(bound, Math.max(Math.abs((long) lo[c]), Math.abs((long) hi[c])));
            high[c] = m[c].shiftRight(s).intValueExact();
        }
        boolean within = true;
        for (int c = 0; c < n; c++) {
            long yLo = m0[c] == 0 ? 0 : reference(lo[c], m0[c], sh[c]);
            long yHi = m0[c] == 0 ? 0 : reference(hi[c], m0[c], sh[c]);
            within &= yLo >= r.qmin() && yHi <= r.qmax();
        }
        for (int k = 30; k >= 1; k--) {
            List<Segment> segs = segments(m, s, k);
            if (fits(segs, high, bound)) return new FixedPointPlan(s, lo, hi, segs, high, within);
        }
        throw new IllegalArgumentException("requantize with shift " + s + " needs |accumulator| up to " + bound
                + " before it saturates; no digit width keeps a·digit inside the ALU's 32 bits, so it cannot run exactly on the accelerator");
    }

    /** The plan's ALU sequence on one lane, with int (wrapping) arithmetic as the simulator's ALU does. */
    public int evaluate(int channel, int acc) {
        int a = Math.min(Math.max(acc, lo[channel]), hi[channel]);
        int c = 0;
        for (Segment seg : segments) {
            if (seg.multiplies()) c += a * seg.digit[channel];
            c += seg.round();
            c >>= seg.width();
        }
        return c + a * high[channel];
    }

    private static List<Segment> segments(BigInteger[] m, int s, int k) {
        List<Segment> out = new ArrayList<>();
        int p = 0;
        while (p < s) {
            int w = Math.min(k, s - p);
            int[] digit = new int[m.length];
            boolean any = false;
            for (int c = 0; c < m.length; c++) {
                digit[c] = m[c].shiftRight(p).intValue() & ((1 << w) - 1);
                any |= digit[c] != 0;
            }
            if (!any) {
                // a zero digit adds nothing, so its shift can grow over further zero bits
                while (p + w < s && w < 30 && zeroBit(m, p + w)) w++;
            }
            int round = p <= s - 1 && s - 1 < p + w ? 1 << (s - 1 - p) : 0;
            out.add(new Segment(w, any ? digit : null, round));
            p += w;
        }
        return out;
    }

    private static boolean zeroBit(BigInteger[] m, int bit) {
        for (BigInteger v : m) {
            if (v.testBit(bit)) return false;
        }
        return true;
    }

    /** Whether every intermediate of {@link #evaluate} stays within int32 for |a| ≤ bound. */
    private static boolean fits(List<Segment> segs, int[] high, long bound) {
        long max = Integer.MAX_VALUE;
        long carry = 0;
        for (Segment seg : segs) {
            long digit = 0;
            if (seg.multiplies()) {
                for (int d : seg.digit) digit = Math.max(digit, d);
            }
            long t = carry + bound * digit + seg.round();
            if (bound * digit > max || t > max) return false;
            carry = (t >> seg.width()) + 1;
        }
        long h = 0;
        for (int v : high) h = Math.max(h, v);
        return bound * h <= max && carry + bound * h <= max;
    }

    private static BigInteger ceilDiv(BigInteger a, BigInteger b) {
        BigInteger[] qr = a.divideAndRemainder(b);
        return qr[1].signum() > 0 ? qr[0].add(BigInteger.ONE) : qr[0];
    }

    private static int clampInt(BigInteger v) {
        return v.max(BigInteger.valueOf(Integer.MIN_VALUE)).min(BigInteger.valueOf(Integer.MAX_VALUE)).intValue();
    }
}
