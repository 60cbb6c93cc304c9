package dev.relayfarm.vta;

/** The on-chip buffers as the program left them, and what it cost. DRAM is the caller's array, updated in place. */
public record SimulationResult(Scratchpad sram, ExecutionStats stats) {
}
