package dev.relayfarm.services.store;

import dev.relayfarm.serde.BlobNotFoundException;
import dev.relayfarm.serde.BlobStore;
import dev.relayfarm.serde.Sha256;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The farm's content-addressed store (table {@code blobs}): models, IR documents, tensor payloads (the
 * IR's claim-check) and artifact archives. A put of a key already stored is a no-op (insert-if-absent), so
 * redelivered stages and concurrent writers of the same bytes never conflict; both directions verify the
 * bytes against the key. Blobs of jobs finished long ago are deleted by {@link RetentionSweeper}; {@link BlobRefs}
 * records which job uses which blob.
 */
@Component
public class PgBlobStore implements BlobStore {
    private final JdbcTemplate jdbc;

    public PgBlobStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void put(String sha256, byte[] bytes) {
        Sha256.requireKey(sha256);
        Sha256.verify(sha256, bytes, " (being stored)");
        // A put of bytes already there refreshes touched_at (at most every 10 minutes, so re-used weights do not rewrite
        // their row on every stage): retention keeps blobs touched recently (RetentionSweeper.TOUCH_GRACE).
        jdbc.update("""
                INSERT INTO blobs (sha256, size_bytes, bytes) VALUES (?, ?, ?)
                ON CONFLICT (sha256) DO UPDATE SET touched_at = now() WHERE blobs.touched_at < now() - interval '10 minutes'""",
                sha256, (long) bytes.length, bytes);
    }

    /** Stores {@code bytes} under their SHA-256 and returns the key. */
    public String put(byte[] bytes) {
        String key = Sha256.hex(bytes);
        put(key, bytes);
        return key;
    }

    @Override
    public byte[] get(String sha256) {
        Sha256.requireKey(sha256);
        List<byte[]> rows = jdbc.query("SELECT bytes FROM blobs WHERE sha256 = ?", (rs, i) -> rs.getBytes(1), sha256);
        if (rows.isEmpty()) throw new BlobNotFoundException(sha256, "table blobs");
        byte[] b = rows.getFirst();
        Sha256.verify(sha256, b, " (table blobs)");
        return b;
    }

    @Override
    public boolean contains(String sha256) {
        if (!Sha256.isKey(sha256)) return false;
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM blobs WHERE sha256 = ?)", Boolean.class, sha256));
    }
}
