package dev.relayfarm.vm;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The blocks of run memory handed back within a run ({@link Instruction.KillRegister} of their storage), kept
 * sorted by size so an allocation takes the smallest block that fits (best fit, as the graph executor's
 * {@code MemoryPlanner} does at compile time).
 *
 * <p><b>Why best fit and not exact size.</b> Reusing only blocks of exactly the requested size left a model whose
 * results all differ in size (ppocr_cls, mobilenet-like) bumping a fresh block for nearly every kernel: more
 * distinct memory touched per run than the graph executor's plan, so colder caches. A block is not taken for a
 * request {@value #MAX_WASTE} times smaller than itself (TVM's storage planner bounds its match range the same
 * way): a scalar does not pin a large block that a later large result could have reused.
 *
 * <p>Two parallel arrays instead of a map of deques: no boxing of the size and no allocation per release (the
 * profile of the map version showed its hashing and boxing in the VM's top frames). Among blocks of one size the
 * last released is taken first: its bytes are the likeliest still in cache. Not thread-safe, like the VM.
 */
final class FreeBlocks {
    static final long MAX_WASTE = 16;

    /** Ascending; among equal sizes the most recently added first. */
    private long[] sizes = new long[16];
    private MemorySegment[] blocks = new MemorySegment[16];
    private int count;

    void clear() {
        Arrays.fill(blocks, 0, count, null); // the chunks outlive the run anyway; drop the views
        count = 0;
    }

    int size() {
        return count;
    }

    void add(MemorySegment block) {
        if (count == sizes.length) {
            sizes = Arrays.copyOf(sizes, count * 2);
            blocks = Arrays.copyOf(blocks, count * 2);
        }
        int at = firstAtLeast(block.byteSize());
        System.arraycopy(sizes, at, sizes, at + 1, count - at);
        System.arraycopy(blocks, at, blocks, at + 1, count - at);
        sizes[at] = block.byteSize();
        blocks[at] = block;
        count++;
    }

    /** The smallest block of at least {@code bytes} (and at most {@link #MAX_WASTE} times that) aligned to {@code alignment}, removed; null if none. */
    MemorySegment take(long bytes, long alignment) {
        long limit = bytes > Long.MAX_VALUE / MAX_WASTE ? Long.MAX_VALUE : bytes * MAX_WASTE;
        for (int i = firstAtLeast(bytes); i < count && sizes[i] <= limit; i++) {
            if (blocks[i].address() % alignment != 0) continue;
            MemorySegment b = blocks[i];
            System.arraycopy(sizes, i + 1, sizes, i, count - i - 1);
            System.arraycopy(blocks, i + 1, blocks, i, count - i - 1);
            blocks[--count] = null;
            return b;
        }
        return null;
    }

    /** The first index whose size is at least {@code bytes} (binary search). */
    private int firstAtLeast(long bytes) {
        int lo = 0, hi = count;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sizes[mid] < bytes) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }
}
