package dev.relayfarm.compile;

import dev.relayfarm.artifact.TensorSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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
        BestFitBlocks blocksOf = new BestFitBlocks();
        for (int s = 0; s < steps.size(); s++) {
            if (steps.get(s) instanceof Step.KernelCall k) {
                for (Slot r : k.results()) {
                    if (r instanceof Slot.Temp(int id)) blockOf[id] = blocksOf.place(MemoryPlan.align(exactBytes(graph.temps().get(id))));
                }
            }
            for (int id : releasedAt.get(s)) {
                if (blockOf[id] >= 0) blocksOf.release(blockOf[id]);
            }
        }
        List<Long> sizes = blocksOf.sizes();
        long[] blockOffset;
        long arena;
        try {
            blockOffset = blocksOf.offsets();
            arena = blocksOf.total();
        } catch (ArithmeticException e) {
            throw new ArtifactLimitException("the arena for the model's " + graph.temps().size() + " intermediates overflows a 64-bit byte count");
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

    /**
     * The limit on the arena ({@link CompileLimits#maxArenaBytes}) checked against a finished plan: the arena is
     * allocated in one piece by {@code relayfarm_create}, so a plan over it would give an artifact that cannot be
     * loaded (a 1x3x99999999x99999 input once planned a 410 TB arena).
     */
    public static void check(MemoryPlan plan, GraphPlan graph, CompileLimits limits) {
        if (plan.arenaBytes() > limits.maxArenaBytes()) {
            TensorSpec biggest = graph.temps().stream().max(java.util.Comparator.comparingLong(MemoryPlanner::exactBytes)).orElseThrow();
            throw new ArtifactLimitException("the model's intermediates need a " + CompileLimits.bytes(plan.arenaBytes()) + " arena, the limit is "
                    + CompileLimits.bytes(limits.maxArenaBytes()) + " (relayfarm.limits.max-arena-bytes); the largest is " + biggest.name() + " "
                    + biggest.shape() + " " + biggest.dtype() + " of " + CompileLimits.bytes(exactBytes(biggest)));
        }
    }

    /** Bytes of {@code t}, or a limit error when the count does not fit a long (TensorSpec.byteSize would wrap around). */
    static long exactBytes(TensorSpec t) {
        try {
            long n = (long) t.dtype().storageBytes() * t.dtype().lanes();
            for (int d : t.shape()) n = Math.multiplyExact(n, (long) d);
            return n;
        } catch (ArithmeticException e) {
            throw new ArtifactLimitException("intermediate " + t.name() + " " + t.shape() + " " + t.dtype() + ": its byte size overflows a 64-bit count");
        }
    }

}
