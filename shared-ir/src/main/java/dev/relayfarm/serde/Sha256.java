package dev.relayfarm.serde;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** SHA-256 keys of the blob store: 64 lower-case hex digits. */
public final class Sha256 {
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{64}");

    private Sha256() {}

    public static String hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    public static boolean isKey(String s) {
        return s != null && KEY.matcher(s).matches();
    }

    /**
     * Rejects anything but a well-formed key; stores use it before building file names or queries
     * from a key, so a hostile key like {@code ../../etc} never reaches the file system.
     */
    public static String requireKey(String s) {
        if (!isKey(s)) throw new BlobStoreException("not a SHA-256 blob key (64 lower-case hex digits): '" + s + "'");
        return s;
    }

    /** Throws unless {@code bytes} hash to {@code sha256}; {@code where} names the blob's location. */
    public static void verify(String sha256, byte[] bytes, String where) {
        String actual = hex(bytes);
        if (!actual.equals(sha256)) {
            throw new BlobStoreException("blob " + sha256 + where + " is corrupt: its " + bytes.length + " bytes hash to " + actual + " (sha mismatch)");
        }
    }
}
