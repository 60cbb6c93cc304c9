package dev.relayfarm.serde;

/**
 * A content-addressed store for tensor payloads: both ends of the claim-check. Implementations must
 * (1) key entries by the SHA-256 of their bytes, (2) make {@code put} idempotent and atomic (a reader
 * never sees half a blob), and (3) be safe for concurrent use. A database-backed store needs only a
 * table {@code (sha256 text primary key, bytes bytea)} with insert-if-absent.
 */
public interface BlobStore extends BlobSink, BlobSource {
    boolean contains(String sha256);
}
