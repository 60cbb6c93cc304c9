package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSystemBlobStoreTest {
    static final byte[] HELLO = "hello blobs".getBytes(StandardCharsets.UTF_8);
    static final String KEY = Sha256.hex(HELLO);

    @Test
    void putThenGetUsesTheFanOutLayout(@TempDir Path dir) throws IOException {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        assertFalse(store.contains(KEY));
        store.put(KEY, HELLO);
        Path expected = dir.resolve(KEY.substring(0, 2)).resolve(KEY);
        assertEquals(expected, store.pathOf(KEY));
        assertArrayEquals(HELLO, Files.readAllBytes(expected));
        assertTrue(store.contains(KEY));
        assertArrayEquals(HELLO, store.get(KEY));
        // A fresh store over the same directory sees it: nothing is kept in memory.
        assertArrayEquals(HELLO, new FileSystemBlobStore(dir).get(KEY));
    }

    @Test
    void putIsIdempotentAndLeavesNoTemporaryFiles(@TempDir Path dir) throws IOException {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        store.put(KEY, HELLO);
        store.put(KEY, HELLO);
        try (Stream<Path> files = Files.walk(dir)) {
            assertEquals(List.of(store.pathOf(KEY)), files.filter(Files::isRegularFile).toList());
        }
    }

    @Test
    void concurrentPutsOfTheSameBlobAllSucceed(@TempDir Path dir) throws Exception {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        byte[] big = new byte[1 << 20];
        for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 31);
        String key = Sha256.hex(big);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 8; i++) fs.add(pool.submit(() -> store.put(key, big)));
            for (Future<?> f : fs) f.get();
        } finally {
            pool.shutdown();
        }
        assertArrayEquals(big, store.get(key));
        try (Stream<Path> files = Files.walk(dir)) {
            assertEquals(1, files.filter(Files::isRegularFile).count(), "temporary files are cleaned up");
        }
    }

    @Test
    void missingBlobIsAClearError(@TempDir Path dir) {
        BlobNotFoundException e = assertThrows(BlobNotFoundException.class, () -> new FileSystemBlobStore(dir).get(KEY));
        assertEquals(KEY, e.sha256());
        assertTrue(e.getMessage().contains(KEY) && e.getMessage().contains(dir.toString()), e.getMessage());
    }

    @Test
    void corruptedFileIsDetectedOnRead(@TempDir Path dir) throws IOException {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        store.put(KEY, HELLO);
        Files.writeString(store.pathOf(KEY), "hello blobz");
        BlobStoreException e = assertThrows(BlobStoreException.class, () -> store.get(KEY));
        assertTrue(e.getMessage().contains("sha mismatch") && e.getMessage().contains(Sha256.hex("hello blobz".getBytes(StandardCharsets.UTF_8))),
                e.getMessage());
    }

    @Test
    void mislabeledPutIsRejected(@TempDir Path dir) {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        String otherKey = Sha256.hex(new byte[] {1});
        BlobStoreException e = assertThrows(BlobStoreException.class, () -> store.put(otherKey, HELLO));
        assertTrue(e.getMessage().contains("sha mismatch"), e.getMessage());
        assertFalse(store.contains(otherKey));
        assertThrows(BlobStoreException.class, () -> new InMemoryBlobStore().put(otherKey, HELLO));
    }

    @Test
    void malformedKeysNeverReachTheFileSystem(@TempDir Path dir) {
        FileSystemBlobStore store = new FileSystemBlobStore(dir);
        for (String bad : new String[] {"../../etc/passwd", KEY.toUpperCase(), KEY.substring(1), "", KEY + "0"}) {
            BlobStoreException e = assertThrows(BlobStoreException.class, () -> store.get(bad), bad);
            assertTrue(e.getMessage().contains("not a SHA-256 blob key"), e.getMessage());
        }
    }

    @Test
    void inMemoryStoreCopiesBytes() {
        InMemoryBlobStore store = new InMemoryBlobStore();
        byte[] b = HELLO.clone();
        store.put(KEY, b);
        b[0] = 'j';
        byte[] got = store.get(KEY);
        got[1] = 'x';
        assertArrayEquals(HELLO, store.get(KEY));
        BlobNotFoundException e = assertThrows(BlobNotFoundException.class, () -> store.get(Sha256.hex(new byte[0])));
        assertTrue(e.getMessage().contains("not found"), e.getMessage());
    }
}
