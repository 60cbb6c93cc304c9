package dev.relayfarm.artifact;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * An artifact directory as a {@code .tar.gz} (POSIX ustar): what the farm stores and the gateway serves.
 * Packing is deterministic (files in path order, mtime 0, uid/gid 0, no directory entries), so the same
 * artifact gives the same archive bytes and sha256. Unpacking reads only regular files and refuses any
 * entry whose path would leave the target directory.
 */
public final class ArtifactArchive {
    private static final int BLOCK = 512;

    private ArtifactArchive() {}

    /** The gzipped tar of every regular file under {@code dir}, paths relative to it. */
    public static byte[] pack(Path dir) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(dir)) {
            files = walk.filter(Files::isRegularFile).map(dir::relativize).sorted().toList();
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            for (Path rel : files) {
                String name = rel.toString().replace('\\', '/');
                byte[] data = Files.readAllBytes(dir.resolve(rel));
                boolean exec = Files.isExecutable(dir.resolve(rel)) || name.endsWith(".so");
                gz.write(header(name, data.length, exec ? 0755 : 0644));
                gz.write(data);
                pad(gz, data.length);
            }
            gz.write(new byte[2 * BLOCK]); // end of archive: two zero blocks
        }
        return bytes.toByteArray();
    }

    /** Extracts a {@link #pack}ed archive (any ustar/gzip archive of plain files) into {@code dir}; returns the files written. */
    public static List<Path> unpack(InputStream in, Path dir) throws IOException {
        Path root = dir.toAbsolutePath().normalize();
        Files.createDirectories(root);
        List<Path> written = new ArrayList<>();
        try (GZIPInputStream gz = new GZIPInputStream(in)) {
            byte[] h = new byte[BLOCK];
            while (gz.readNBytes(h, 0, BLOCK) == BLOCK) {
                String name = text(h, 0, 100);
                if (name.isEmpty()) break;
                String prefix = text(h, 345, 155);
                if (!prefix.isEmpty()) name = prefix + "/" + name;
                long size = Long.parseLong(text(h, 124, 12).trim().isEmpty() ? "0" : text(h, 124, 12).trim(), 8);
                char type = (char) h[156];
                byte[] data = gz.readNBytes((int) size);
                if (data.length != size) throw new IOException("truncated archive: entry " + name + " wants " + size + " bytes, got " + data.length);
                gz.skipNBytes((BLOCK - size % BLOCK) % BLOCK);
                if (type != '0' && type != 0) continue; // directories, links: not part of an artifact
                Path target = root.resolve(name).normalize();
                if (!target.startsWith(root) || target.equals(root)) throw new IOException("archive entry '" + name + "' leaves " + root);
                Files.createDirectories(target.getParent());
                Files.write(target, data);
                written.add(target);
            }
        }
        return written;
    }

    private static byte[] header(String name, long size, int mode) throws IOException {
        byte[] h = new byte[BLOCK];
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        if (n.length > 100) throw new IOException("artifact path too long for a tar header (100 bytes): " + name);
        System.arraycopy(n, 0, h, 0, n.length);
        octal(h, 100, 8, mode);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, size);
        octal(h, 136, 12, 0);
        h[156] = '0';
        System.arraycopy("ustar\u000000".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 8);
        // the checksum is computed with its own field as spaces
        for (int i = 148; i < 156; i++) h[i] = ' ';
        long sum = 0;
        for (byte b : h) sum += b & 0xff;
        octal(h, 148, 7, sum);
        return h;
    }

    /** {@code value} as zero-padded octal digits in {@code len - 1} bytes, NUL-terminated. */
    private static void octal(byte[] h, int off, int len, long value) {
        String s = Long.toOctalString(value);
        if (s.length() > len - 1) throw new IllegalArgumentException("value " + value + " does not fit a " + len + "-byte tar field");
        s = "0".repeat(len - 1 - s.length()) + s;
        System.arraycopy(s.getBytes(StandardCharsets.US_ASCII), 0, h, off, len - 1);
        h[off + len - 1] = 0;
    }

    private static void pad(OutputStream out, long size) throws IOException {
        int rest = (int) ((BLOCK - size % BLOCK) % BLOCK);
        out.write(new byte[rest]);
    }

    private static String text(byte[] h, int off, int len) {
        int end = off;
        while (end < off + len && h[end] != 0) end++;
        return new String(h, off, end - off, StandardCharsets.UTF_8);
    }
}
