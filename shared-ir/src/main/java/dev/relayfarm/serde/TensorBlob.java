package dev.relayfarm.serde;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The blob form of a tensor: the UTF-8 header {@code float32[2, 3]} followed by the little-endian
 * element bytes. These are exactly the bytes {@link NDArray#sha256()} hashes, so the blob's plain
 * SHA-256 is the tensor's key: any store can verify content against its key without knowing about
 * tensors, and the blob is self-describing.
 */
final class TensorBlob {
    private TensorBlob() {}

    static byte[] encode(NDArray a) {
        byte[] header = header(a.dtype(), a.shape());
        byte[] data = a.toBytes();
        byte[] out = Arrays.copyOf(header, header.length + data.length);
        System.arraycopy(data, 0, out, header.length, data.length);
        return out;
    }

    /**
     * Decodes a blob, checking that its header names the dtype and shape the document declares.
     *
     * @throws IllegalArgumentException describing the mismatch
     */
    static NDArray decode(byte[] blob, DType dtype, int[] shape) {
        byte[] expected = header(dtype, shape);
        // The header ends at the first ']' (dtype names contain none), so compare the prefix.
        int end = 0;
        while (end < blob.length && blob[end] != ']') end++;
        if (end == blob.length) throw new IllegalArgumentException("blob has no tensor header");
        byte[] actual = Arrays.copyOf(blob, end + 1);
        if (!Arrays.equals(actual, expected)) {
            throw new IllegalArgumentException("blob holds a " + new String(actual, StandardCharsets.UTF_8)
                    + " tensor but the document declares " + new String(expected, StandardCharsets.UTF_8));
        }
        return NDArray.fromBytes(dtype, shape, Arrays.copyOfRange(blob, end + 1, blob.length));
    }

    private static byte[] header(DType dtype, int[] shape) {
        return (dtype + Arrays.toString(shape)).getBytes(StandardCharsets.UTF_8);
    }
}
