package dev.relayfarm.vta;

import java.util.Map;
import java.util.OptionalLong;

/**
 * What a run cost in the cycle model.
 *
 * @param totalCycles    when the last module finished its last instruction
 * @param busyCycles     cycles each module spent executing (excluding waiting for tokens)
 * @param loadedBytes    bytes read from DRAM per target buffer (padding is not read, so not counted)
 * @param storedBytes    bytes written to DRAM by STOREs
 * @param gemmOps        GEMM loop steps, reset steps included: each is one cycle of the GEMM core
 * @param macs           multiply-accumulates done by non-reset GEMM steps
 * @param aluOps         ALU loop steps, each one vector operation over an accumulator entry
 * @param leftoverTokens tokens pushed but never popped, per queue; non-zero usually means a mismatched push
 * @param finishCycle    when FINISH completed, if the program had one
 */
public record ExecutionStats(long totalCycles, Map<Module, Long> busyCycles, Map<BufferKind, Long> loadedBytes, long storedBytes, long gemmOps,
        long macs, long aluOps, Map<DependencyQueue, Integer> leftoverTokens, OptionalLong finishCycle) {
    public ExecutionStats {
        busyCycles = Map.copyOf(busyCycles);
        loadedBytes = Map.copyOf(loadedBytes);
        leftoverTokens = Map.copyOf(leftoverTokens);
    }

    public long busy(Module module) {
        return busyCycles.getOrDefault(module, 0L);
    }

    public long loaded(BufferKind buffer) {
        return loadedBytes.getOrDefault(buffer, 0L);
    }

    public long busySum() {
        return busyCycles.values().stream().mapToLong(Long::longValue).sum();
    }
}
