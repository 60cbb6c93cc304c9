package dev.relayfarm.compile;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * {@code params.bin}: the module's constants, loaded once by the entry point's {@code relayfarm_create}.
 *
 * <pre>
 * bytes 0..7    "RFPARAM1"
 * bytes 8..15   parameter count (uint64, little-endian)
 * bytes 16..23  data bytes D (uint64, little-endian)
 * bytes 24..63  zero
 * bytes 64..    D bytes of data: parameter i at data offset {@code offsets[i]} (64-byte aligned),
 *               dense row-major little-endian, zero padding between
 * </pre>
 *
 * The offsets are compiled into the entry point and listed in manifest.json; the loader checks the
 * count and size, so a params.bin from another build is rejected rather than misread.
 */
public final class ParamsFile {
    public static final String MAGIC = "RFPARAM1";
    public static final int HEADER = 64;

    /** Where each parameter sits in the data section and how big the section is. */
    public record Layout(List<Long> offsets, long dataBytes) {
        public Layout {
            offsets = List.copyOf(offsets);
        }
    }

    private ParamsFile() {}

    public static Layout layout(List<TensorSpec> specs) {
        List<Long> offsets = new ArrayList<>();
        long at = 0;
        for (TensorSpec s : specs) {
            offsets.add(at);
            at += MemoryPlan.align(s.byteSize());
        }
        return new Layout(offsets, at);
    }

    /** Writes the file; returns its SHA-256 (hex). */
    public static String write(Path file, List<NDArray> params, Layout layout) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (OutputStream out = new DigestOutputStream(new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 20), md)) {
            ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
            header.put(MAGIC.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            header.putLong(params.size());
            header.putLong(layout.dataBytes());
            out.write(header.array());
            long at = 0;
            for (int i = 0; i < params.size(); i++) {
                long off = layout.offsets().get(i);
                out.write(new byte[(int) (off - at)]);
                byte[] bytes = params.get(i).toBytes();
                out.write(bytes);
                at = off + bytes.length;
            }
            out.write(new byte[(int) (layout.dataBytes() - at)]);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** Reads parameter {@code i} back (for tests and tools; the entry point reads the file itself). */
    public static NDArray read(Path file, List<TensorSpec> specs, Layout layout, int i) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file)) {
            TensorSpec s = specs.get(i);
            ByteBuffer buf = ByteBuffer.allocate((int) s.byteSize());
            ch.read(buf, HEADER + layout.offsets().get(i));
            return NDArray.fromBytes(s.dtype(), s.shapeArray(), buf.array());
        }
    }
}
