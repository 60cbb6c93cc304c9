package dev.relayfarm.runtime;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * Kernel calls queued in native memory and run in order by one call into the library ({@code rf_run_batch}, emitted
 * by kernel/codegen/CEmitter): the caller pays one Java-to-native transition for the whole queue instead of one per
 * kernel. Each queued call's buffers are checked as {@link NativeKernel#invoke(MemorySegment, List)} checks them, when
 * queued. The buffers must stay allocated and unwritten from Java until {@link #run}: the queue holds their addresses,
 * not copies. Not thread-safe: one queue belongs to one caller (the VM, which runs one call at a time).
 */
public final class KernelBatch implements AutoCloseable {
    static final FunctionDescriptor ABI = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS);
    private static final long POINTER = ValueLayout.ADDRESS.byteSize();

    /** A queued call failed: the ones before it ran, the ones after it did not. */
    public static final class Failure extends IllegalStateException {
        private final int index;

        Failure(int index, String message) {
            super(message);
            this.index = index;
        }

        /** The position of the failed call in the queue that was run. */
        public int index() {
            return index;
        }
    }

    private final MethodHandle run;
    private final Arena arena = Arena.ofShared();
    private final int capacity;
    private final long slotCapacity;
    /*
     * Global-scope views of this arena's memory: a downcall acquires and releases the shared arena of every segment it
     * is passed, an atomic update each; the memory lives until close, after which nothing runs.
     */
    private final MemorySegment fns, argArrays, slots, status;
    private final NativeKernel[] kernels;
    private int count;
    private long slotsUsed;

    KernelBatch(MemorySegment entry, int capacity, long slotCapacity) {
        if (capacity < 1 || slotCapacity < 1) throw new IllegalArgumentException("a batch needs room for a call, got " + capacity + " calls, " + slotCapacity + " pointers");
        this.run = Linker.nativeLinker().downcallHandle(entry, ABI);
        this.capacity = capacity;
        this.slotCapacity = slotCapacity;
        this.fns = global(arena.allocate(ValueLayout.ADDRESS, capacity));
        this.argArrays = global(arena.allocate(ValueLayout.ADDRESS, capacity));
        this.slots = global(arena.allocate(ValueLayout.ADDRESS, slotCapacity));
        this.status = global(arena.allocate(ValueLayout.JAVA_INT));
        this.kernels = new NativeKernel[capacity];
    }

    private static MemorySegment global(MemorySegment s) {
        return MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    /**
     * Queues {@code kernel} on {@code buffers} (inputs then outputs); false, queuing nothing, when the queue has no room
     * left for it ({@link #run} it, then add again). A buffer that does not fit the kernel's signature is an
     * {@link IllegalArgumentException}, as for a direct call.
     */
    public boolean add(NativeKernel kernel, List<MemorySegment> buffers) {
        int params = kernel.signature().params().size();
        if (count == capacity || slotsUsed + params > slotCapacity) {
            if (count == 0) throw new IllegalArgumentException("kernel " + kernel.signature().name() + " takes " + params + " buffers, more than a batch holds (" + slotCapacity + ")");
            return false;
        }
        kernel.setArguments(slots, slotsUsed, buffers);
        fns.setAtIndex(ValueLayout.ADDRESS, count, kernel.address());
        argArrays.setAtIndex(ValueLayout.ADDRESS, count, MemorySegment.ofAddress(slots.address() + slotsUsed * POINTER));
        kernels[count++] = kernel;
        slotsUsed += Math.max(1, params);
        return true;
    }

    /** Calls queued and not yet run. */
    public int size() {
        return count;
    }

    /** Runs the queued calls in order and empties the queue; a call that fails stops the run with a {@link Failure}. */
    public void run() {
        if (count == 0) return;
        int n = count;
        count = 0;
        slotsUsed = 0;
        int failed;
        try {
            failed = (int) run.invokeExact(n, fns, argArrays, status);
        } catch (Throwable t) {
            throw new IllegalStateException("a batch of " + n + " kernel calls failed to run", t);
        }
        if (failed >= 0) {
            int rc = status.get(ValueLayout.JAVA_INT, 0);
            // -1 is the one status generated kernels return: an intermediate buffer they could not allocate
            throw new Failure(failed, "kernel " + kernels[failed].signature().name() + " returned " + rc + (rc == -1 ? " (out of memory for an intermediate buffer)" : ""));
        }
    }

    /** Forgets the queued calls without running them (a run that failed before reaching them). */
    public void clear() {
        count = 0;
        slotsUsed = 0;
    }

    @Override
    public void close() {
        arena.close();
    }
}
