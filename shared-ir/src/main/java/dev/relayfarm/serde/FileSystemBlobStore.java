package dev.relayfarm.serde;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Blobs as files {@code root/ab/abcdef...} (the first two hex digits fan out the directory). Writes
 * go to a temporary file in the target directory and are then moved into place atomically, so a
 * concurrent reader sees either no blob or the whole blob. Reads re-hash the file, so a blob damaged
 * on disk is reported instead of silently producing wrong weights.
 */
public final class FileSystemBlobStore implements BlobStore {
    private final Path root;

    public FileSystemBlobStore(Path root) {
        this.root = root;
    }

    public Path root() {
        return root;
    }

    /** Where the blob with this key lives (whether or not it exists). */
    public Path pathOf(String sha256) {
        Sha256.requireKey(sha256);
        return root.resolve(sha256.substring(0, 2)).resolve(sha256);
    }

    @Override
    public void put(String sha256, byte[] bytes) {
        Path target = pathOf(sha256);
        Sha256.verify(sha256, bytes, " (being stored at " + target + ")");
        if (Files.isRegularFile(target)) return; // content-addressed: same key, same bytes
        try {
            Files.createDirectories(target.getParent());
            Path tmp = Files.createTempFile(target.getParent(), sha256.substring(0, 8) + ".", ".tmp");
            try {
                Files.write(tmp, bytes);
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new BlobStoreException("cannot store blob " + sha256 + " at " + target + ": " + e.getMessage(), e);
        }
    }

    @Override
    public byte[] get(String sha256) {
        Path p = pathOf(sha256);
        if (!Files.isRegularFile(p)) throw new BlobNotFoundException(sha256, "no file " + p);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(p);
        } catch (IOException e) {
            throw new BlobStoreException("cannot read blob " + sha256 + " at " + p + ": " + e.getMessage(), e);
        }
        Sha256.verify(sha256, bytes, " at " + p);
        return bytes;
    }

    @Override
    public boolean contains(String sha256) {
        return Files.isRegularFile(pathOf(sha256));
    }
}
