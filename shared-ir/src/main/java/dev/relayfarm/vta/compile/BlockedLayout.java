package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.BufferKind;
import dev.relayfarm.vta.VtaConfig;

/**
 * Where a layer's tensors live in DRAM and how they are packed into the accelerator's blocked layout (BATCH = 1):
 *
 * <ul>
 *   <li>input: entry {@code (cib, y, x)} holds channels {@code cib·BLOCK_IN ..} of pixel (y, x), entries ordered
 *       [cib][y][x], so a tile's rows of one channel block are a 2-D strided DMA with padding;
 *   <li>weights: entry {@code (cob, cib, ky, kx)} is the BLOCK_OUT × BLOCK_IN block, entries ordered
 *       [cob][cib][ky][kx], so a tile's output-channel blocks are one contiguous DMA;
 *   <li>constants: accumulator entries {@code (cob, k)}, one int32 per output channel of the block, for the epilogue's
 *       per-channel operands (bias, requantize digits and bounds);
 *   <li>output: entry {@code (cob, oy, ox)}, ordered [cob][oy][ox]; an int32 output is four such planes, byte 0 first.
 * </ul>
 *
 * Channels are zero-padded to whole blocks; padded weights and constants are zero. Offsets count entries of each
 * region's own kind; regions are 256-byte aligned.
 */
public record BlockedLayout(ConvGeometry geometry, int blockIn, int blockOut, int inBlocks, int outBlocks, int constantsPerBlock, int outputPlanes,
        long uopBase, long weightBase, long constBase, long inputBase, long outputBase, int dramBytes) {

    public static BlockedLayout of(QuantizedLayer layer, VtaConfig config, int uops, int constantsPerBlock) {
        ConvGeometry g = layer.geometry();
        int inBlocks = ceilDiv(layer.gemmChannelsIn(), config.blockIn());
        int outBlocks = ceilDiv(g.channelsOut(), config.blockOut());
        int planes = layer.int32Output() ? 4 : 1;
        long at = 0;
        long uopByte = at;
        at = align(at + (long) uops * config.entryBytes(BufferKind.UOP));
        long wgtByte = at;
        at = align(at + (long) outBlocks * inBlocks * g.kernelH() * g.kernelW() * config.entryBytes(BufferKind.WGT));
        long constByte = at;
        at = align(at + (long) outBlocks * constantsPerBlock * config.entryBytes(BufferKind.ACC));
        long inByte = at;
        at = align(at + (long) inBlocks * g.height() * g.width() * config.entryBytes(BufferKind.INP));
        long outByte = at;
        at = align(at + (long) planes * outBlocks * g.outHeight() * g.outWidth() * config.outputEntryBytes());
        if (at > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(layer.name() + ": needs " + at + " bytes of DRAM, more than the simulator's byte array holds");
        }
        return new BlockedLayout(g, config.blockIn(), config.blockOut(), inBlocks, outBlocks, constantsPerBlock, planes,
                uopByte / config.entryBytes(BufferKind.UOP), wgtByte / config.entryBytes(BufferKind.WGT), constByte / config.entryBytes(BufferKind.ACC),
                inByte / config.entryBytes(BufferKind.INP), outByte / config.outputEntryBytes(), (int) at);
    }

    public long outputPlaneEntries() {
        return (long) outBlocks * geometry.outHeight() * geometry.outWidth();
    }

    /** Writes the micro-op words. */
    public void putUops(byte[] dram, int[] words) {
        for (int i = 0; i < words.length; i++) putInt(dram, (int) (uopBase * 4 + 4L * i), words[i]);
    }

    /** Packs the OIHW weights; a uint8-input layer's second half of input channels gets -w (see QuantizedLayer). */
    public void putWeights(byte[] dram, QuantizedLayer layer) {
        ConvGeometry g = geometry;
        int cin = g.channelsIn();
        int blockBytes = blockOut * blockIn;
        for (int cob = 0; cob < outBlocks; cob++) {
            for (int cib = 0; cib < inBlocks; cib++) {
                for (int ky = 0; ky < g.kernelH(); ky++) {
                    for (int kx = 0; kx < g.kernelW(); kx++) {
                        long entry = weightBase + ((long) (cob * inBlocks + cib) * g.kernelH() + ky) * g.kernelW() + kx;
                        int from = (int) (entry * blockBytes);
                        for (int o = 0; o < blockOut; o++) {
                            int co = cob * blockOut + o;
                            for (int k = 0; k < blockIn; k++) {
                                int ci = cib * blockIn + k;
                                if (co >= g.channelsOut() || ci >= layer.gemmChannelsIn()) continue;
                                byte w = layer.weight(co, ci % cin, ky, kx);
                                dram[from + o * blockIn + k] = ci < cin ? w : (byte) -w;
                            }
                        }
                    }
                }
            }
        }
    }

    /** Constant {@code k} of every output channel (channels past the layer's are zero). */
    public void putConstant(byte[] dram, int k, int[] perChannel) {
        for (int co = 0; co < perChannel.length; co++) {
            long entry = constBase + (long) (co / blockOut) * constantsPerBlock + k;
            putInt(dram, (int) (entry * blockOut * 4 + 4L * (co % blockOut)), perChannel[co]);
        }
    }

    /** Packs an input tensor: NCHW with N = 1, or a dense layer's [N, K] as K channels of an N×1 image. */
    public void putInput(byte[] dram, QuantizedLayer layer, NDArray input) {
        int[] want = layer.inputShape();
        if (!java.util.Arrays.equals(input.shape(), want) || !input.dtype().equals(layer.inputDtype())) {
            throw new IllegalArgumentException(layer.name() + ": input must be " + layer.inputDtype() + java.util.Arrays.toString(want) + ", got "
                    + input.dtype() + java.util.Arrays.toString(input.shape()));
        }
        ConvGeometry g = geometry;
        int cin = g.channelsIn(), h = g.height(), w = g.width();
        for (int c = 0; c < cin; c++) {
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    int v = (int) input.getLong(layer.dense() ? y * cin + c : (c * h + y) * w + x);
                    if (layer.unsignedInput()) {
                        put(dram, c, y, x, (byte) (v & 127));
                        put(dram, cin + c, y, x, (byte) (-128 * (v >> 7)));
                    } else {
                        put(dram, c, y, x, (byte) v);
                    }
                }
            }
        }
    }

    private void put(byte[] dram, int channel, int y, int x, byte value) {
        long entry = inputBase + ((long) (channel / blockIn) * geometry.height() + y) * geometry.width() + x;
        dram[(int) (entry * blockIn + channel % blockIn)] = value;
    }

    /** Reads the output back: int8 / uint8 from one plane, int32 from four (little-endian bytes of the accumulator). */
    public NDArray output(byte[] dram, QuantizedLayer layer) {
        ConvGeometry g = geometry;
        int cout = g.channelsOut(), oh = g.outHeight(), ow = g.outWidth();
        long[] values = new long[cout * oh * ow];
        for (int co = 0; co < cout; co++) {
            for (int y = 0; y < oh; y++) {
                for (int x = 0; x < ow; x++) {
                    long entry = outputBase + ((long) (co / blockOut) * oh + y) * ow + x;
                    int at = (int) (entry * blockOut + co % blockOut);
                    long v;
                    if (layer.int32Output()) {
                        long planeBytes = outputPlaneEntries() * blockOut;
                        v = 0;
                        for (int p = 0; p < 4; p++) {
                            int b = dram[(int) (at + p * planeBytes)];
                            v |= (long) (p == 3 ? b : b & 0xFF) << (8 * p);
                        }
                    } else {
                        v = layer.outputDtype().equals(dev.relayfarm.ir.DType.UINT8) ? dram[at] & 0xFF : dram[at];
                    }
                    values[layer.dense() ? y * cout + co : (co * oh + y) * ow + x] = v;
                }
            }
        }
        return NDArray.fromLongs(layer.outputDtype(), layer.outputShape(), values);
    }

    static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    private static long align(long bytes) {
        return (bytes + 255) / 256 * 256;
    }

    private static void putInt(byte[] dram, int at, int v) {
        dram[at] = (byte) v;
        dram[at + 1] = (byte) (v >> 8);
        dram[at + 2] = (byte) (v >> 16);
        dram[at + 3] = (byte) (v >> 24);
    }
}
