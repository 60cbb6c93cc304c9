package dev.relayfarm.compile;

import java.util.List;

/**
 * Where each intermediate lives: temp {@code i} at byte {@code offsets[i]} of one arena of
 * {@code arenaBytes}. Temps share a storage block when their lifetimes do not overlap. Every offset
 * is a multiple of {@link #ALIGN}, as kernels assume 64-byte aligned buffers.
 */
public record MemoryPlan(List<Long> offsets, List<Integer> blockOf, List<Long> blockSizes, long arenaBytes) {
    public static final int ALIGN = 64;

    public MemoryPlan {
        offsets = List.copyOf(offsets);
        blockOf = List.copyOf(blockOf);
        blockSizes = List.copyOf(blockSizes);
    }

    public long offset(Slot.Temp t) {
        return offsets.get(t.id());
    }

    static long align(long bytes) {
        return (Math.max(bytes, 1) + ALIGN - 1) / ALIGN * ALIGN;
    }
}
