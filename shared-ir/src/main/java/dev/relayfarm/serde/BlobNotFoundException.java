package dev.relayfarm.serde;

/** The store holds no blob under the requested key. */
public final class BlobNotFoundException extends BlobStoreException {
    private final String sha256;

    public BlobNotFoundException(String sha256, String where) {
        super("blob " + sha256 + " not found: " + where);
        this.sha256 = sha256;
    }

    public String sha256() {
        return sha256;
    }
}
