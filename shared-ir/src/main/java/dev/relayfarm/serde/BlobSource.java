package dev.relayfarm.serde;

/** Where the deserializer fetches tensor payloads that a document references by SHA-256. */
@FunctionalInterface
public interface BlobSource {
    /** A source that holds nothing: for documents expected to be self-contained. */
    BlobSource NONE = sha256 -> {
        throw new BlobNotFoundException(sha256, "no blob source was given");
    };

    /**
     * The bytes stored under {@code sha256}.
     *
     * @throws BlobNotFoundException when the source does not hold that key
     * @throws BlobStoreException when the stored bytes do not hash to the key or cannot be read
     */
    byte[] get(String sha256);
}
