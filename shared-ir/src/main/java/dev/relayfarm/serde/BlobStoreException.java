package dev.relayfarm.serde;

/** A blob could not be stored or fetched, or its bytes do not match its key. */
public class BlobStoreException extends RuntimeException {
    public BlobStoreException(String message) {
        super(message);
    }

    public BlobStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
