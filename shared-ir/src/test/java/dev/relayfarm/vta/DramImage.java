package dev.relayfarm.vta;

import java.util.Random;

/** A DRAM byte array with the little-endian writers tests need to lay out tensors and micro-ops. */
final class DramImage {
    final byte[] bytes;

    DramImage(int size) {
        bytes = new byte[size];
    }

    DramImage putBytes(int at, byte[] data) {
        System.arraycopy(data, 0, bytes, at, data.length);
        return this;
    }

    DramImage putInts(int at, int... values) {
        for (int i = 0; i < values.length; i++) {
            int v = values[i];
            int p = at + 4 * i;
            bytes[p] = (byte) v;
            bytes[p + 1] = (byte) (v >> 8);
            bytes[p + 2] = (byte) (v >> 16);
            bytes[p + 3] = (byte) (v >> 24);
        }
        return this;
    }

    DramImage putUops(int at, Uop... uops) {
        int[] words = new int[uops.length];
        for (int i = 0; i < uops.length; i++) {
            words[i] = uops[i].encode();
        }
        return putInts(at, words);
    }

    static byte[] randomInt8(Random random, int count) {
        byte[] data = new byte[count];
        random.nextBytes(data);
        return data;
    }
}
