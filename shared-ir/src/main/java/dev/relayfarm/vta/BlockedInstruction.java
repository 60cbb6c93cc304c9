package dev.relayfarm.vta;

import java.util.List;

/** A module stuck at an instruction because the tokens it pops are not there. */
public record BlockedInstruction(Module module, int instructionIndex, Opcode opcode, String description, List<DependencyQueue> missingTokens) {
    public BlockedInstruction {
        missingTokens = List.copyOf(missingTokens);
    }

    @Override
    public String toString() {
        return module + " blocked at instruction #" + instructionIndex + " (" + description + ") waiting for a token on "
                + String.join(" and ", missingTokens.stream().map(DependencyQueue::toString).toList());
    }
}
