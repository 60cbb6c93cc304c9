package dev.relayfarm.vta;

/** A program the simulated hardware cannot execute: the message names the instruction index, its kind and the field. */
public final class VtaProgramException extends RuntimeException {
    private final int instructionIndex;

    public VtaProgramException(int instructionIndex, Instruction instruction, String problem) {
        super("instruction #" + instructionIndex + " (" + instruction.describe() + "): " + problem);
        this.instructionIndex = instructionIndex;
    }

    public int instructionIndex() {
        return instructionIndex;
    }
}
