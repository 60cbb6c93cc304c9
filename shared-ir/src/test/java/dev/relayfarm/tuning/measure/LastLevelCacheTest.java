package dev.relayfarm.tuning.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LastLevelCacheTest {
    @Test
    void readsSysfsSizes() {
        assertEquals(32L << 20, LastLevelCache.parse("32768K"));
        assertEquals(2L << 20, LastLevelCache.parse("2M"));
        assertEquals(512, LastLevelCache.parse("512"));
    }

    @Test
    void aFlushWritesAtLeastTwiceTheLargestCache() {
        long cache = LastLevelCache.bytes();
        assertTrue(cache > 0);
        assertTrue(LastLevelCache.flushBytes() >= 2 * cache && LastLevelCache.flushBytes() >= 8L << 20);
    }
}
