package dev.relayfarm.vm;

import dev.relayfarm.compile.BestFitBlocks;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A run's allocations laid out in one native arena, as the graph executor's {@code MemoryPlanner} lays out a
 * model's intermediates at compile time, but from a recorded {@link AllocationTrace} instead of the program: each
 * allocation lives from its event to its release (or the run's end); walking the events in order, an allocation
 * takes the smallest free block that fits, else grows the largest free block to its size (its earlier tenants are
 * dead; blocks are placed only after planning, so growing costs nothing), else opens a block.
 *
 * <p><b>Why.</b> At run time the VM can only reuse a killed block that already fits ({@link FreeBlocks}): a bump
 * allocator cannot grow a block in place, so a model whose results change size touches more memory per run than
 * the graph executor's plan (ppocr_cls: 0.90 MB unplanned, 0.72 MB planned, which is the graph executor's 0.61 MB
 * arena plus the 0.11 MB input copy), and the more memory, the colder the kernels' caches. Replaying a plan also
 * costs a request an array compare instead of a search.
 *
 * <p><b>When it is valid.</b> Only for a run that makes exactly the traced requests in the traced order:
 * {@link RunMemory} checks each event against the plan and falls back to run-time allocation from the first one
 * that differs (see there). Blocks of allocations live at the same time never overlap, so the blocks handed out
 * before a divergence stay valid after it.
 */
final class RunPlan implements AutoCloseable {
    private final AllocationTrace trace;
    private final Arena arena;
    /** Per allocation number, its bytes in the arena (exactly the bytes it asked for). */
    private final MemorySegment[] blocks;
    private final long bytes;

    private RunPlan(AllocationTrace trace, Arena arena, MemorySegment[] blocks, long bytes) {
        this.trace = trace;
        this.arena = arena;
        this.blocks = blocks;
        this.bytes = bytes;
    }

    /** The arena's size for {@code trace}, computed without allocating it (so a plan over the run's budget is not made). */
    static long arenaBytes(AllocationTrace trace) {
        return layout(trace).arenaBytes;
    }

    static RunPlan build(AllocationTrace trace) {
        Layout layout = layout(trace);
        Arena arena = Arena.ofShared();
        MemorySegment base = arena.allocate(Math.max(layout.arenaBytes, 1), layout.alignment);
        MemorySegment[] blocks = new MemorySegment[trace.allocations()];
        int allocation = 0;
        for (int e = 0; e < trace.length(); e++) {
            if (trace.isAllocation(e)) {
                blocks[allocation] = base.asSlice(layout.offsetOf[allocation], trace.bytes(e));
                allocation++;
            }
        }
        return new RunPlan(trace.copy(), arena, blocks, layout.arenaBytes);
    }

    AllocationTrace trace() {
        return trace;
    }

    long bytes() {
        return bytes;
    }

    /** Whether event {@code event} of the plan is an allocation of {@code bytes} aligned to {@code alignment}. */
    boolean allocates(int event, long bytes, long alignment) {
        return event < trace.length() && trace.isAllocation(event) && trace.bytes(event) == bytes && trace.alignment(event) == alignment;
    }

    /** Whether event {@code event} of the plan is the release of {@code block} (the very segment the plan handed out). */
    boolean releases(int event, MemorySegment block) {
        return event < trace.length() && !trace.isAllocation(event) && blocks[trace.released(event)] == block;
    }

    MemorySegment block(int allocation) {
        return blocks[allocation];
    }

    @Override
    public void close() {
        arena.close();
    }

    private record Layout(long[] offsetOf, long arenaBytes, long alignment) {}

    private static Layout layout(AllocationTrace trace) {
        // every block starts at a multiple of the largest alignment asked for (64 for tensors), so every allocation is aligned
        long alignment = 64;
        for (int e = 0; e < trace.length(); e++) if (trace.isAllocation(e)) alignment = Math.max(alignment, trace.alignment(e));
        int[] blockOf = new int[trace.allocations()];
        BestFitBlocks blocks = new BestFitBlocks();
        int allocation = 0;
        for (int e = 0; e < trace.length(); e++) {
            if (trace.isAllocation(e)) blockOf[allocation++] = blocks.place(alignUp(trace.bytes(e), alignment));
            else blocks.release(blockOf[trace.released(e)]);
        }
        long[] blockOffset = blocks.offsets();
        long total = blocks.total();
        long[] offsetOf = new long[blockOf.length];
        for (int a = 0; a < blockOf.length; a++) offsetOf[a] = blockOffset[blockOf[a]];
        return new Layout(offsetOf, total, alignment);
    }

    private static long alignUp(long bytes, long alignment) {
        return Math.addExact(bytes, alignment - 1) & -alignment;
    }
}
