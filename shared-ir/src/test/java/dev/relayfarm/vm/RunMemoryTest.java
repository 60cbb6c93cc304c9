package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Run memory on real native memory: planning a repeated run, replaying it, and leaving the plan when a run differs. */
class RunMemoryTest {
    /** One run of a small program: A and B live together, A dies, then C (larger than either) while B lives; returns the live blocks at the end. */
    static List<MemorySegment> run(RunMemory memory, long cBytes) {
        memory.reset();
        MemorySegment a = memory.allocate(1000, 64);
        MemorySegment b = memory.allocate(1000, 64);
        memory.release(a);
        MemorySegment c = memory.allocate(cBytes, 64);
        assertTrue(a.byteSize() >= 1000 && b.byteSize() >= 1000 && c.byteSize() >= cBytes);
        assertDisjoint(b, c);
        return List.of(b, c);
    }

    static void assertDisjoint(MemorySegment x, MemorySegment y) {
        assertTrue(x.address() + x.byteSize() <= y.address() || y.address() + y.byteSize() <= x.address(),
                "blocks overlap: " + x.address() + "+" + x.byteSize() + " and " + y.address() + "+" + y.byteSize());
    }

    @Test
    void aRunThatRepeatsThePreviousOneIsPlannedAndReplayedInLessMemory() {
        try (Arena arena = Arena.ofConfined()) {
            RunMemory memory = new RunMemory(arena, 1 << 30);
            run(memory, 2000);
            memory.endRun();
            long unplanned = memory.runBytes();
            List<MemorySegment> second = run(memory, 2000);
            memory.endRun();
            assertFalse(memory.replaying(), "two runs are recorded before one is planned");
            List<MemorySegment> third = run(memory, 2000);
            assertTrue(memory.replaying());
            memory.endRun();
            // C grows A's dead block (1024 -> 2048) instead of taking a new one: 3 KiB planned against 4 KiB bumped
            assertEquals(3072, memory.runBytes());
            assertTrue(memory.runBytes() < unplanned, memory.runBytes() + " vs " + unplanned);
            List<MemorySegment> fourth = run(memory, 2000);
            memory.endRun();
            assertEquals(third.get(1).address(), fourth.get(1).address(), "a replayed run gets the plan's blocks again");
            assertNotEquals(second.get(1).address(), third.get(1).address());
            memory.close();
        }
    }

    @Test
    void aRunThatLeavesThePlanGetsMemoryApartFromThePlansLiveBlocksAndDropsIt() {
        try (Arena arena = Arena.ofConfined()) {
            RunMemory memory = new RunMemory(arena, 1 << 30);
            for (int i = 0; i < 3; i++) {
                run(memory, 2000);
                memory.endRun();
            }
            // same start, then a larger C: A and B come from the plan, C from the chunks, and B and C must not overlap
            List<MemorySegment> other = run(memory, 5000);
            assertFalse(memory.replaying());
            memory.endRun();
            // a plan once left is dropped: the next run is unplanned, and the one after it (repeating it) planned again
            run(memory, 5000);
            assertFalse(memory.replaying());
            memory.endRun();
            run(memory, 5000);
            assertTrue(memory.replaying());
            memory.endRun();
            assertEquals(1000, other.get(0).byteSize());
            memory.close();
        }
    }

    @Test
    void aBlockOfThePlanReleasedAfterLeavingItIsReusedWithoutOverlap() {
        try (Arena arena = Arena.ofConfined()) {
            RunMemory memory = new RunMemory(arena, 1 << 30);
            for (int i = 0; i < 3; i++) {
                memory.reset();
                MemorySegment a = memory.allocate(4096, 64);
                memory.allocate(64, 64);
                memory.release(a);
                memory.endRun();
            }
            memory.reset();
            MemorySegment a = memory.allocate(4096, 64);
            MemorySegment b = memory.allocate(128, 64); // differs from the plan's 64
            assertFalse(memory.replaying());
            memory.release(a);
            MemorySegment c = memory.allocate(4000, 64); // takes A's planned block back from the free list
            assertEquals(a.address(), c.address());
            assertDisjoint(b, c);
            memory.endRun();
            memory.close();
        }
    }

    @Test
    void aRunThatFailsIsNotPlannedFromAndAPlanOverTheBudgetIsNotMade() {
        try (Arena arena = Arena.ofConfined()) {
            RunMemory memory = new RunMemory(arena, 1 << 30);
            run(memory, 2000);
            memory.endRun();
            run(memory, 2000); // no endRun: the run failed
            run(memory, 2000);
            memory.endRun();
            run(memory, 2000);
            assertFalse(memory.replaying(), "the failed run counted as the repeat");
            memory.endRun();
            memory.close();
        }
        try (Arena arena = Arena.ofConfined()) {
            // 2990 bytes fit the budget of 3000 unplanned, but a plan rounds its blocks up to 64 bytes (3008): no plan
            RunMemory memory = new RunMemory(arena, 3000);
            List<Long> seen = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                memory.reset();
                memory.allocate(2990, 64);
                seen.add(memory.runBytes());
                assertFalse(memory.replaying());
                memory.endRun();
            }
            assertTrue(seen.stream().allMatch(b -> b <= 3000), seen.toString());
            memory.close();
        }
    }
}
