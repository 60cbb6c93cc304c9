package dev.relayfarm.vta;

import java.util.List;

/**
 * No module can advance while instructions remain: every unfinished module waits on a token nobody will push. The
 * hardware would hang; the simulator names what each module is waiting for so the missing push can be found.
 */
public final class DeadlockException extends RuntimeException {
    private final List<BlockedInstruction> blocked;

    public DeadlockException(List<BlockedInstruction> blocked, int remaining) {
        super("deadlock with " + remaining + " instruction(s) left: "
                + String.join("; ", blocked.stream().map(BlockedInstruction::toString).toList()));
        this.blocked = List.copyOf(blocked);
    }

    public List<BlockedInstruction> blocked() {
        return blocked;
    }
}
