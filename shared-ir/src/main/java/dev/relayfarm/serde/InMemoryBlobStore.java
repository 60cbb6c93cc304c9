package dev.relayfarm.serde;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A blob store in a map: for tests and for single-process pipelines. Copies bytes in and out. */
public final class InMemoryBlobStore implements BlobStore {
    private final ConcurrentHashMap<String, byte[]> blobs = new ConcurrentHashMap<>();

    @Override
    public void put(String sha256, byte[] bytes) {
        Sha256.requireKey(sha256);
        Sha256.verify(sha256, bytes, " (being stored)");
        blobs.putIfAbsent(sha256, bytes.clone());
    }

    @Override
    public byte[] get(String sha256) {
        byte[] b = blobs.get(sha256);
        if (b == null) throw new BlobNotFoundException(sha256, "the in-memory store holds " + blobs.size() + " other blobs");
        return b.clone();
    }

    @Override
    public boolean contains(String sha256) {
        return blobs.containsKey(sha256);
    }

    public int size() {
        return blobs.size();
    }

    public Set<String> keys() {
        return Set.copyOf(blobs.keySet());
    }
}
