package dev.relayfarm.vm;

import java.util.Arrays;

/**
 * The allocations and releases of one VM run, in order: what {@link RunPlan} lays out, and what tells whether a
 * run repeated the one before it. Allocation {@code k} is the k-th {@link RunMemory#allocate} of the run; a release
 * names the allocation whose block came back. Primitive arrays, grown by doubling: recording costs a store or two
 * per event.
 */
final class AllocationTrace {
    /** Event i: {@code > 0} an allocation of that many bytes; {@code < 0} the release of allocation {@code -event - 1}. */
    private long[] events = new long[64];
    /** Event i's alignment (allocations only). */
    private long[] alignments = new long[64];
    private int length;
    private int allocations;

    void clear() {
        length = 0;
        allocations = 0;
    }

    int length() {
        return length;
    }

    int allocations() {
        return allocations;
    }

    /** Records an allocation of {@code bytes} (at least one) aligned to {@code alignment}; returns its number. */
    int allocate(long bytes, long alignment) {
        add(bytes, alignment);
        return allocations++;
    }

    void release(int allocation) {
        add(-(long) allocation - 1, 0);
    }

    boolean isAllocation(int event) {
        return events[event] > 0;
    }

    long bytes(int event) {
        return events[event];
    }

    long alignment(int event) {
        return alignments[event];
    }

    int released(int event) {
        return (int) (-events[event] - 1);
    }

    /** This trace becomes the first {@code events} events of {@code other}. */
    void copyPrefix(AllocationTrace other, int eventCount) {
        clear();
        for (int i = 0; i < eventCount; i++) {
            if (other.isAllocation(i)) allocate(other.bytes(i), other.alignment(i));
            else release(other.released(i));
        }
    }

    boolean sameAs(AllocationTrace other) {
        return length == other.length && Arrays.equals(events, 0, length, other.events, 0, length)
                && Arrays.equals(alignments, 0, length, other.alignments, 0, length);
    }

    /** An independent copy (a plan keeps the trace it was built from while the VM records the next runs). */
    AllocationTrace copy() {
        AllocationTrace c = new AllocationTrace();
        c.events = Arrays.copyOf(events, Math.max(length, 1));
        c.alignments = Arrays.copyOf(alignments, Math.max(length, 1));
        c.length = length;
        c.allocations = allocations;
        return c;
    }

    private void add(long event, long alignment) {
        if (length == events.length) {
            events = Arrays.copyOf(events, length * 2);
            alignments = Arrays.copyOf(alignments, length * 2);
        }
        events[length] = event;
        alignments[length] = alignment;
        length++;
    }
}
