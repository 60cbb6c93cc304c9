package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Best-fit reuse of killed blocks, on real native memory. */
class FreeBlocksTest {
    @Test
    void takesTheSmallestBlockThatFitsAndRemovesIt() {
        try (Arena arena = Arena.ofConfined()) {
            FreeBlocks free = new FreeBlocks();
            MemorySegment big = arena.allocate(4096, 64), mid = arena.allocate(1024, 64), small = arena.allocate(256, 64);
            free.add(big);
            free.add(small);
            free.add(mid);
            assertSame(mid, free.take(600, 64));
            assertSame(big, free.take(600, 64), "the 1024-byte block was taken: the next fit is the 4096-byte one");
            assertSame(small, free.take(100, 64));
            assertNull(free.take(1, 64));
            assertEquals(0, free.size());
        }
    }

    @Test
    void theLastReleasedOfEqualBlocksComesFirst() {
        try (Arena arena = Arena.ofConfined()) {
            FreeBlocks free = new FreeBlocks();
            MemorySegment a = arena.allocate(512, 64), b = arena.allocate(512, 64);
            free.add(a);
            free.add(b);
            assertSame(b, free.take(512, 64));
            assertSame(a, free.take(512, 64));
        }
    }

    @Test
    void aBlockFarLargerThanTheRequestOrMisalignedIsLeft() {
        try (Arena arena = Arena.ofConfined()) {
            FreeBlocks free = new FreeBlocks();
            MemorySegment huge = arena.allocate(64 * FreeBlocks.MAX_WASTE + 64, 64);
            free.add(huge);
            assertNull(free.take(64, 64), "a 64-byte tensor would pin a block more than " + FreeBlocks.MAX_WASTE + " times its size");
            assertSame(huge, free.take(128, 64));
            MemorySegment misaligned = arena.allocate(256, 128).asSlice(64, 128);
            free.add(misaligned);
            assertNull(free.take(128, 128));
            assertSame(misaligned, free.take(128, 64));
        }
    }

    @Test
    void growsPastItsInitialCapacityAndClears() {
        try (Arena arena = Arena.ofConfined()) {
            FreeBlocks free = new FreeBlocks();
            for (int i = 100; i > 0; i--) free.add(arena.allocate(64L * i, 64));
            assertEquals(100, free.size());
            assertEquals(64 * 37, free.take(64 * 37, 64).byteSize());
            free.clear();
            assertEquals(0, free.size());
            assertNull(free.take(64, 64));
        }
    }
}
