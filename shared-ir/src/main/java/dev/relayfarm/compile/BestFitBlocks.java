package dev.relayfarm.compile;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Static memory planning's block assignment, for the graph executor's arena ({@link MemoryPlanner}) and the VM's
 * planned runs ({@code vm.RunPlan}): tensors are placed in order into blocks; a placement takes the smallest free block
 * that fits (best fit), else grows the largest free one to the size asked, else opens a new block; a released block
 * is free again. Ties go to the lowest block id, so a plan is the same every time. The blocks then lie one after
 * another ({@link #offsets}).
 */
public final class BestFitBlocks {
    private final List<Long> sizes = new ArrayList<>();
    /** Free blocks by size (size -> block ids). */
    private final TreeMap<Long, TreeSet<Integer>> free = new TreeMap<>();

    /** The block for a tensor of {@code bytes} (already aligned as the caller lays blocks out). */
    public int place(long bytes) {
        Integer block = take(free.ceilingKey(bytes));
        if (block == null && !free.isEmpty()) {
            block = take(free.lastKey());
            sizes.set(block, bytes);
        }
        if (block == null) {
            block = sizes.size();
            sizes.add(bytes);
        }
        return block;
    }

    /** {@code block}'s tensor is dead: the block can take another. */
    public void release(int block) {
        free.computeIfAbsent(sizes.get(block), x -> new TreeSet<>()).add(block);
    }

    public List<Long> sizes() {
        return List.copyOf(sizes);
    }

    /** Each block's offset when the blocks lie one after another; the total is {@link #total}. */
    public long[] offsets() {
        long[] offsets = new long[sizes.size()];
        long at = 0;
        for (int b = 0; b < sizes.size(); b++) {
            offsets[b] = at;
            at = Math.addExact(at, sizes.get(b));
        }
        return offsets;
    }

    public long total() {
        long at = 0;
        for (long s : sizes) at = Math.addExact(at, s);
        return at;
    }

    private Integer take(Long size) {
        if (size == null) return null;
        TreeSet<Integer> ids = free.get(size);
        Integer b = ids.pollFirst();
        if (ids.isEmpty()) free.remove(size);
        return b;
    }
}
