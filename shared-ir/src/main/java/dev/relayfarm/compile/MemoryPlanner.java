package dev.relayfarm.compile;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Static memory planning by liveness (TVM's GraphPlanMemory idea): a temp is live from the step that
 * produces it to the last step that reads it. Walking the steps in order, a step's results take
 * storage blocks first (so a kernel never gets an input and an output in the same memory: kernels
 * are not written to run in place), then the temps whose last reader was this step release theirs.
 *
 * <p>A result takes the smallest free block that fits it (best fit); when none fits, the largest free
 * block grows to its size (cheaper than a new block: the old bytes are reused); with no free block a
 * new one is opened. Blocks are then laid end to end, aligned, in one arena.
 *
 * <p>Inputs, outputs and parameters are not planned: they live in the caller's buffers and params.bin.
 */
public final class MemoryPlanner {
    private MemoryPlanner() {}

    public static MemoryPlan plan(GraphPlan graph) {
        int n = graph.temps().size();
        int[] lastUse = new int[n];
        Arrays.fill(lastUse, -1);
        List<Step> steps = graph.steps();
        for (int s = 0; s < steps.size(); s++) {
            switch (steps.get(s)) {
                case Step.KernelCall k -> {
                    for (Slot a : k.args()) if (a instanceof Slot.Temp(int id)) lastUse[id] = s;
                    // A result nobody reads still needs memory while its kernel runs.
                    for (Slot r : k.results()) if (r instanceof Slot.Temp(int id)) lastUse[id] = Math.max(lastUse[id], s);
                }
                case Step.Copy c -> {
                    if (c.src() instanceof Slot.Temp(int id)) lastUse[id] = s;
                }
            }
        }
        List<List<Integer>> releasedAt = new ArrayList<>();
        for (int s = 0; s < steps.size(); s++) releasedAt.add(new ArrayList<>());
        for (int id = 0; id < n; id++) if (lastUse[id] >= 0) releasedAt.get(lastUse[id]).add(id);
        int[] blockOf = new int[n];
        Arrays.fill(blockOf, -1);
        List<Long> sizes = new ArrayList<>();
        // Free blocks by size (size -> block ids) for best fit; ties broken by block id for determinism.
        TreeMap<Long, TreeSet<Integer>> free = new TreeMap<>();
        for (int s = 0; s < steps.size(); s++) {
            if (steps.get(s) instanceof Step.KernelCall k) {
                for (Slot r : k.results()) {
                    if (!(r instanceof Slot.Temp(int id))) continue;
                    long need = MemoryPlan.align(graph.temps().get(id).byteSize());
                    Integer block = take(free, free.ceilingKey(need));
                    if (block == null && !free.isEmpty()) {
                        block = take(free, free.lastKey());
                        sizes.set(block, need);
                    }
                    if (block == null) {
                        block = sizes.size();
                        sizes.add(need);
                    }
                    blockOf[id] = block;
                }
            }
            for (int id : releasedAt.get(s)) {
                if (blockOf[id] >= 0) free.computeIfAbsent(sizes.get(blockOf[id]), x -> new TreeSet<>()).add(blockOf[id]);
            }
        }
        long[] blockOffset = new long[sizes.size()];
        long arena = 0;
        for (int b = 0; b < sizes.size(); b++) {
            blockOffset[b] = arena;
            arena += sizes.get(b);
        }
        List<Long> offsets = new ArrayList<>();
        List<Integer> blocks = new ArrayList<>();
        for (int id = 0; id < n; id++) {
            if (blockOf[id] < 0) throw new IllegalStateException("temp " + id + " (" + graph.temps().get(id).name() + ") is never produced by a kernel");
            offsets.add(blockOffset[blockOf[id]]);
            blocks.add(blockOf[id]);
        }
        return new MemoryPlan(offsets, blocks, sizes, arena);
    }

    private static Integer take(TreeMap<Long, TreeSet<Integer>> free, Long size) {
        if (size == null) return null;
        TreeSet<Integer> ids = free.get(size);
        Integer b = ids.pollFirst();
        if (ids.isEmpty()) free.remove(size);
        return b;
    }
}
