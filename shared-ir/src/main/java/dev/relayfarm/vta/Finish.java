package dev.relayfarm.vta;

/** Signals the host that the program is done; executed by the compute module and costs no cycles. */
public record Finish(DependencyFlags deps) implements Instruction {
}
