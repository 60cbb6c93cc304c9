package dev.relayfarm.vm;

/**
 * The {@link VirtualMachine}'s budgets: a runaway program stops with an error naming the budget instead of
 * exhausting the heap or native memory.
 *
 * @param maxFrames    call frames on the VM's stack (non-tail recursion depth; tail calls take none)
 * @param maxRunBytes  native memory one run may allocate for tensors. Only kernel results that never escape are
 *                     reused within a run ({@link StorageKills}), so this bounds what the others add up to (a loop of
 *                     n iterations passing scalars to its next iteration keeps about 64 bytes per scalar per iteration)
 */
public record VmOptions(int maxFrames, long maxRunBytes) {
    public static final VmOptions DEFAULT = new VmOptions(1_000_000, 4L << 30);

    public VmOptions {
        if (maxFrames < 1) throw new IllegalArgumentException("maxFrames must be at least 1, got " + maxFrames);
        if (maxRunBytes < 1) throw new IllegalArgumentException("maxRunBytes must be at least 1, got " + maxRunBytes);
    }

    public VmOptions withMaxFrames(int v) {
        return new VmOptions(v, maxRunBytes);
    }

    public VmOptions withMaxRunBytes(long v) {
        return new VmOptions(maxFrames, v);
    }
}
