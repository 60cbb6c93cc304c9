package dev.relayfarm.vm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The native memory of one VM run: bump allocation over chunks that the VM keeps from run to run and hands
 * out again from the start at each {@link #reset}. A run's storage costs a pointer bump instead of a
 * {@code malloc}, a zero fill and a {@code free} per block (what an arena per run cost: 5 to 25% of a small
 * static model's time), and steady-state runs allocate nothing. Memory grows to the largest run's
 * need and is freed with the VM. Not thread-safe, like the VM.
 */
final class RunMemory {
    /** Small enough that a scalar program does not hold much, large enough that a 100,000-element list takes a few chunks. */
    private static final long CHUNK = 1 << 20;

    private final Arena arena;
    private final long maxBytes;
    private final List<MemorySegment> chunks = new ArrayList<>();
    /** Blocks handed back this run ({@link #release}): the next allocation they fit takes the smallest. */
    private final FreeBlocks free = new FreeBlocks();
    /** Bytes handed out this run, alignment padding included: what {@link VmOptions#maxRunBytes} bounds. */
    private long runBytes;
    private int current;
    private long used;

    RunMemory(Arena arena, long maxBytes) {
        this.arena = arena;
        this.maxBytes = maxBytes;
    }

    /** Forgets every block: what the previous run allocated may be handed out again. */
    void reset() {
        current = 0;
        used = 0;
        runBytes = 0;
        free.clear();
    }

    /** Bytes taken from the chunks this run (reused blocks not counted): what reuse saves shows here. */
    long runBytes() {
        return runBytes;
    }

    /** Hands {@code block} (as {@link #allocate} returned it) back: nothing reads it any more ({@link Instruction.KillRegister} of its storage). */
    void release(MemorySegment block) {
        free.add(block);
    }

    /**
     * A block of at least {@code size} bytes (and at least one) aligned to {@code alignment}: a released one when one fits
     * ({@link FreeBlocks}, so possibly larger: callers slice what they asked for and release the block itself); contents
     * are whatever the last user left.
     */
    MemorySegment allocate(long size, long alignment) {
        long bytes = Math.max(size, 1);
        MemorySegment reused = free.take(bytes, alignment);
        if (reused != null) return reused;
        if (runBytes + bytes > maxBytes) {
            throw new VmException("the run needs more than " + maxBytes + " bytes of tensor memory, the limit (VmOptions.maxRunBytes; within a run only killed kernel results are reused)");
        }
        while (true) {
            if (current == chunks.size()) chunks.add(newChunk(Math.max(CHUNK, bytes + alignment)));
            MemorySegment chunk = chunks.get(current);
            long start = alignUp(chunk.address() + used, alignment) - chunk.address();
            if (start + bytes <= chunk.byteSize()) {
                runBytes += start - used + bytes;
                used = start + bytes;
                return chunk.asSlice(start, bytes);
            }
            // too small for this block: a bigger chunk is inserted here (a later run reuses it for the same need)
            if (bytes + alignment > chunk.byteSize() && used == 0) chunks.add(current, newChunk(bytes + alignment));
            else current++;
            used = 0;
        }
    }

    private MemorySegment newChunk(long size) {
        return arena.allocate(size, 64);
    }

    private static long alignUp(long address, long alignment) {
        return (address + alignment - 1) & -alignment;
    }
}
