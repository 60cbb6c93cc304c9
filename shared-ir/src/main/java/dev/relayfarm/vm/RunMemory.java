package dev.relayfarm.vm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The native memory of one VM run: bump allocation over chunks that the VM keeps from run to run and hands
 * out again from the start at each {@link #reset}. A run's storage costs a pointer bump instead of a
 * {@code malloc}, a zero fill and a {@code free} per block (what an arena per run cost: 5 to 25% of a small
 * static model's time), and steady-state runs allocate nothing. Memory grows to the largest run's
 * need and is freed with the VM. Not thread-safe, like the VM.
 *
 * <p><b>Planned runs.</b> Every run's requests are recorded ({@link AllocationTrace}); when a run that completed
 * made exactly the requests of the run before it (a static model does from its second run on), they are laid out
 * once ({@link RunPlan}: best fit with growth, as the graph executor plans its arena) and the following runs are
 * served from that layout while each request matches the plan's next event. The first request or release that
 * differs (other shapes, another path through the program) ends the replay for the rest of the run: from there on
 * blocks come from the chunks and the free list as in an unplanned run, the plan's blocks still live stay where
 * they are (live blocks never overlap in a plan), and the plan is dropped when the run ends. Alternating between
 * two kinds of runs therefore plans neither, instead of replanning every run.
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
    /** This run's requests, and the previous completed unplanned run's. */
    private AllocationTrace trace = new AllocationTrace(), previous = new AllocationTrace();
    private boolean previousComplete;
    /** Between {@link #reset} and {@link #endRun}: still set at the next reset, the run failed. */
    private boolean inRun;
    /** Unplanned allocations of this run by block, for recording their releases. */
    private final Map<MemorySegment, Integer> numberOf = new IdentityHashMap<>();
    private RunPlan plan;
    /** Whether this run still follows {@link #plan}, and the plan event it is at. */
    private boolean replaying;
    private int cursor;
    /** Allocations served from the plan this run: the next one's number. */
    private int planAllocations;
    /** Whether this run left the plan: it is dropped at the end of the run. */
    private boolean diverged;

    RunMemory(Arena arena, long maxBytes) {
        this.arena = arena;
        this.maxBytes = maxBytes;
    }

    /** Forgets every block: what the previous run allocated may be handed out again. A run that did not reach {@link #endRun} (it failed) is not planned from. */
    void reset() {
        if (inRun) previousComplete = false; // the last run failed: what it did is no run to plan from or compare with
        inRun = true;
        current = 0;
        used = 0;
        free.clear();
        numberOf.clear();
        trace.clear();
        diverged = false;
        cursor = 0;
        planAllocations = 0;
        replaying = plan != null;
        runBytes = replaying ? plan.bytes() : 0;
    }

    /**
     * The run finished and its results were copied out: a run that followed the plan to its end keeps it; one that left it
     * drops it; an unplanned run that repeated the previous one is planned for the next runs.
     */
    void endRun() {
        inRun = false;
        if (replaying && cursor == plan.trace().length()) return;
        if (replaying) leavePlan(); // it stopped short of the plan: its trace is the plan's prefix
        if (plan != null && diverged) {
            plan.close();
            plan = null;
        }
        if (previousComplete && trace.sameAs(previous) && trace.allocations() > 0 && RunPlan.arenaBytes(trace) <= maxBytes) plan = RunPlan.build(trace);
        AllocationTrace t = previous;
        previous = trace;
        trace = t;
        previousComplete = true;
    }

    /** Bytes of the run's memory in use: the plan's arena while there is one, plus what was taken from the chunks (reused blocks not counted). */
    long runBytes() {
        return runBytes;
    }

    /** Whether this run is being served from a plan so far. */
    boolean replaying() {
        return replaying;
    }

    /** Hands {@code block} (as {@link #allocate} returned it) back: nothing reads it any more ({@link Instruction.KillRegister} of its storage). */
    void release(MemorySegment block) {
        if (replaying) {
            if (plan.releases(cursor, block)) {
                cursor++;
                return;
            }
            leavePlan();
        }
        Integer number = numberOf.remove(block);
        if (number != null) trace.release(number);
        free.add(block);
    }

    /**
     * This run stops following the plan: what it did so far is the plan's first {@link #cursor} events, and the plan's
     * blocks handed out so far are recorded as its allocations, so a later release of one is traced and freed as usual.
     */
    private void leavePlan() {
        replaying = false;
        diverged = true;
        trace.copyPrefix(plan.trace(), cursor);
        for (int a = 0; a < trace.allocations(); a++) numberOf.put(plan.block(a), a);
        for (int e = 0; e < cursor; e++) if (!trace.isAllocation(e)) numberOf.remove(plan.block(trace.released(e)));
    }

    /** Frees the plan's arena (the chunks belong to the VM's arena). */
    void close() {
        if (plan != null) plan.close();
        plan = null;
    }

    /**
     * A block of at least {@code size} bytes (and at least one) aligned to {@code alignment}: a released one when one fits
     * ({@link FreeBlocks}, so possibly larger: callers slice what they asked for and release the block itself); contents
     * are whatever the last user left.
     */
    MemorySegment allocate(long size, long alignment) {
        long bytes = Math.max(size, 1);
        if (replaying) {
            if (plan.allocates(cursor, bytes, alignment)) {
                cursor++;
                return plan.block(planAllocations++);
            }
            leavePlan();
        }
        MemorySegment block = unplanned(bytes, alignment);
        numberOf.put(block, trace.allocate(bytes, alignment));
        return block;
    }

    private MemorySegment unplanned(long bytes, long alignment) {
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
