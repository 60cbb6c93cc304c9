package dev.relayfarm.vta;

/** A 128-bit encoded instruction: {@code low} holds bits 0..63, {@code high} bits 64..127. */
public record InstructionWord(long low, long high) {
    @Override
    public String toString() {
        return String.format("%016x_%016x", high, low);
    }
}
