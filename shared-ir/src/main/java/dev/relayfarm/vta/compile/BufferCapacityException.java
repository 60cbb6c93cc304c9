package dev.relayfarm.vta.compile;

import dev.relayfarm.vta.BufferKind;

/** A schedule whose tiles do not fit an on-chip buffer; the message names the buffer, the need and the capacity. */
public final class BufferCapacityException extends IllegalArgumentException {
    private final BufferKind buffer;

    public BufferCapacityException(String layer, VtaSchedule schedule, BufferKind buffer, long neededEntries, int entryBytes, int capacityEntries) {
        super(layer + " with schedule (" + schedule + "): the " + buffer + " buffer would need " + neededEntries + " entries ("
                + neededEntries * entryBytes + " bytes) but holds " + capacityEntries + " (" + (long) capacityEntries * entryBytes + " bytes)");
        this.buffer = buffer;
    }

    public BufferKind buffer() {
        return buffer;
    }
}
