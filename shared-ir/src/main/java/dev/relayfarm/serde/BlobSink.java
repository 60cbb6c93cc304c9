package dev.relayfarm.serde;

/**
 * Where the serializer puts tensor payloads too large to travel inline (claim-check): the JSON keeps
 * only the key. Keys are lower-case hex SHA-256 of the payload bytes, so a sink may treat a second
 * {@code put} of a key it already holds as a no-op.
 */
@FunctionalInterface
public interface BlobSink {
    /** A sink for documents that must stay self-contained: any attempt to store a blob fails. */
    BlobSink NONE = (sha256, bytes) -> {
        throw new BlobStoreException("a constant of " + bytes.length + " bytes is above the inline limit but no blob sink was given");
    };

    /**
     * Stores {@code bytes} under {@code sha256}, which must be {@link Sha256#hex(byte[]) the hash of
     * the bytes}. Idempotent.
     */
    void put(String sha256, byte[] bytes);
}
