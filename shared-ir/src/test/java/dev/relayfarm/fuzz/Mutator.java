package dev.relayfarm.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Mutations of a seed input, the way libFuzzer's default mutators work (bit flips, interesting values, range
 * erase/duplicate/insert, splicing with another seed) plus text mutations that keep a Relay program mostly
 * lexable (dictionary tokens, deep nesting). Every mutation keeps the result at most {@link #MAX_BYTES}.
 */
public final class Mutator {
    /** Large enough for 100k-deep nesting, small enough that one input is fast. */
    public static final int MAX_BYTES = 512 * 1024;

    private static final byte[] INTERESTING_8 = {0, 1, -1, 0x7f, (byte) 0x80, 0x40, 0x20, 0x10, 0x0a, 0x22, 0x5c};
    private static final long[] INTERESTING_VARINT = {0, 1, -1, 127, 128, 255, 256, 65535, 65536, Integer.MAX_VALUE, 1L << 31, 1L << 32, Long.MAX_VALUE,
            Long.MIN_VALUE, 99_999_999L};

    private final Random rng;

    public Mutator(Random rng) {
        this.rng = rng;
    }

    /** {@code rounds} random byte-level mutations of {@code seed}; {@code others} are splice partners. */
    public byte[] mutateBytes(byte[] seed, int rounds, List<byte[]> others) {
        byte[] b = seed;
        for (int r = 0; r < rounds; r++) {
            b = switch (rng.nextInt(9)) {
                case 0 -> flipBit(b);
                case 1 -> setByte(b);
                case 2 -> eraseRange(b);
                case 3 -> duplicateRange(b);
                case 4 -> insertRandom(b);
                case 5 -> others.isEmpty() ? flipBit(b) : splice(b, others.get(rng.nextInt(others.size())));
                case 6 -> insertVarint(b);
                case 7 -> truncate(b);
                default -> overwriteRange(b);
            };
        }
        return cap(b);
    }

    /** {@code rounds} random text mutations drawing tokens from {@code dictionary}. */
    public String mutateText(String seed, int rounds, List<String> dictionary) {
        StringBuilder s = new StringBuilder(seed);
        for (int r = 0; r < rounds; r++) {
            int at = s.isEmpty() ? 0 : rng.nextInt(s.length() + 1);
            switch (rng.nextInt(8)) {
                case 0 -> s.insert(at, dictionary.get(rng.nextInt(dictionary.size())));
                case 1 -> {
                    if (!s.isEmpty()) {
                        int from = rng.nextInt(s.length());
                        s.delete(from, Math.min(s.length(), from + 1 + rng.nextInt(Math.min(64, s.length() - from))));
                    }
                }
                case 2 -> {
                    if (!s.isEmpty()) {
                        int from = rng.nextInt(s.length());
                        int to = Math.min(s.length(), from + 1 + rng.nextInt(80));
                        s.insert(at, s.substring(from, to));
                    }
                }
                case 3 -> {
                    if (!s.isEmpty()) s.setCharAt(Math.min(at, s.length() - 1), (char) (rng.nextBoolean() ? rng.nextInt(128) : rng.nextInt(0x3000)));
                }
                case 4 -> s.insert(at, nesting(dictionary));
                case 5 -> {
                    if (!s.isEmpty()) s.setLength(rng.nextInt(s.length()));
                }
                case 6 -> s.insert(at, number());
                default -> {
                    // replace a token-ish run with a dictionary token
                    if (!s.isEmpty()) {
                        int from = Math.min(at, s.length() - 1);
                        int to = from;
                        while (to < s.length() && Character.isLetterOrDigit(s.charAt(to))) to++;
                        s.replace(from, Math.max(from + 1, to), dictionary.get(rng.nextInt(dictionary.size())));
                    }
                }
            }
            if (s.length() > MAX_BYTES) s.setLength(MAX_BYTES);
        }
        return s.toString();
    }

    /** A deeply nested fragment: depth picked log-uniformly up to 100k, so both shallow and absurd nestings occur. */
    private String nesting(List<String> dictionary) {
        int depth = (int) Math.pow(10, rng.nextDouble() * 5);
        String[][] shapes = {{"(", ")"}, {"f(", ")"}, {"(", ",)"}, {"fn () { ", " }"}, {"if (%c) { ", " } else { 0 }"}, {"[", "]"},
                {"Tensor[(", "), float32]"}, {"let %v = ", "; %v"}, {"{", "}"}, {"(1, ", ")"}};
        String[] open = shapes[rng.nextInt(shapes.length)];
        int unit = open[0].length() + open[1].length();
        depth = Math.min(depth, (MAX_BYTES - 64) / Math.max(1, unit));
        String core = dictionary.get(rng.nextInt(dictionary.size()));
        StringBuilder sb = new StringBuilder(depth * unit + core.length());
        sb.append(open[0].repeat(depth)).append(core);
        if (rng.nextInt(4) != 0) sb.append(open[1].repeat(depth)); // sometimes left open
        return sb.toString();
    }

    private String number() {
        String[] numbers = {"0", "-0", "1e309", "-1e309", "nan", "inf", "3.4028236e38f", "9223372036854775808", "-9223372036854775809", "0x7fffffff",
                "1f", "1i64", "255u8", "-1u8", "1e-400", "99999999", "1.5f16", "00000000000000000000001"};
        return numbers[rng.nextInt(numbers.length)];
    }

    private byte[] flipBit(byte[] b) {
        if (b.length == 0) return new byte[] {(byte) rng.nextInt(256)};
        byte[] out = b.clone();
        int i = rng.nextInt(out.length);
        out[i] ^= (byte) (1 << rng.nextInt(8));
        return out;
    }

    private byte[] setByte(byte[] b) {
        if (b.length == 0) return new byte[] {INTERESTING_8[rng.nextInt(INTERESTING_8.length)]};
        byte[] out = b.clone();
        out[rng.nextInt(out.length)] = rng.nextBoolean() ? INTERESTING_8[rng.nextInt(INTERESTING_8.length)] : (byte) rng.nextInt(256);
        return out;
    }

    private byte[] eraseRange(byte[] b) {
        if (b.length < 2) return b;
        int from = rng.nextInt(b.length);
        int len = 1 + rng.nextInt(Math.min(b.length - from, 1 + rng.nextInt(256)));
        byte[] out = new byte[b.length - len];
        System.arraycopy(b, 0, out, 0, from);
        System.arraycopy(b, from + len, out, from, b.length - from - len);
        return out;
    }

    private byte[] duplicateRange(byte[] b) {
        if (b.length == 0) return b;
        int from = rng.nextInt(b.length);
        int len = 1 + rng.nextInt(Math.min(b.length - from, 512));
        int at = rng.nextInt(b.length + 1);
        return insertAt(b, at, Arrays.copyOfRange(b, from, from + len));
    }

    private byte[] insertRandom(byte[] b) {
        byte[] ins = new byte[1 + rng.nextInt(16)];
        rng.nextBytes(ins);
        return insertAt(b, rng.nextInt(b.length + 1), ins);
    }

    private byte[] overwriteRange(byte[] b) {
        if (b.length == 0) return b;
        byte[] out = b.clone();
        int from = rng.nextInt(out.length);
        int len = 1 + rng.nextInt(Math.min(out.length - from, 8));
        for (int i = 0; i < len; i++) out[from + i] = (byte) rng.nextInt(256);
        return out;
    }

    /** Protobuf's integers are varints: an interesting value written as one makes lengths and dims extreme. */
    private byte[] insertVarint(byte[] b) {
        long v = INTERESTING_VARINT[rng.nextInt(INTERESTING_VARINT.length)];
        byte[] buf = new byte[10];
        int n = 0;
        do {
            byte x = (byte) (v & 0x7f);
            v >>>= 7;
            buf[n++] = (byte) (v != 0 ? x | 0x80 : x);
        } while (v != 0 && n < 10);
        byte[] varint = Arrays.copyOf(buf, n);
        if (b.length > n && rng.nextBoolean()) { // overwrite in place: keeps the surrounding structure
            byte[] out = b.clone();
            System.arraycopy(varint, 0, out, rng.nextInt(b.length - n), n);
            return out;
        }
        return insertAt(b, rng.nextInt(b.length + 1), varint);
    }

    private byte[] truncate(byte[] b) {
        return b.length == 0 ? b : Arrays.copyOf(b, rng.nextInt(b.length));
    }

    private byte[] splice(byte[] a, byte[] other) {
        if (a.length == 0 || other.length == 0) return a;
        int cut = rng.nextInt(a.length);
        int from = rng.nextInt(other.length);
        byte[] out = Arrays.copyOf(a, cut + (other.length - from));
        System.arraycopy(other, from, out, cut, other.length - from);
        return out;
    }

    private static byte[] insertAt(byte[] b, int at, byte[] ins) {
        byte[] out = new byte[b.length + ins.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(ins, 0, out, at, ins.length);
        System.arraycopy(b, at, out, at + ins.length, b.length - at);
        return out;
    }

    private static byte[] cap(byte[] b) {
        return b.length > MAX_BYTES ? Arrays.copyOf(b, MAX_BYTES) : b;
    }

    /** UTF-8 bytes of a string (mutated text stays valid UTF-8 unless a byte mutation follows). */
    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
