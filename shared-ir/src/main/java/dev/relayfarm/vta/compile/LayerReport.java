package dev.relayfarm.vta.compile;

import dev.relayfarm.vta.BufferKind;
import dev.relayfarm.vta.ExecutionStats;

/**
 * One offloaded layer's cost in the SIMULATOR's cycle model.
 *
 * @param gemmCycles   cycles the GEMM core was busy (one per GEMM or reset step)
 * @param utilization  GEMM cycles / total cycles
 * @param usefulMacs   the layer's own multiply-accumulates over those the GEMM steps did (channel padding to
 *                     blocks is the waste)
 */
public record LayerReport(String layer, String shape, VtaSchedule schedule, long cycles, long gemmCycles, double utilization, double usefulMacs,
        long aluOps, long inputBytes, long weightBytes, long accBytes, long uopBytes, long storedBytes) {

    public static LayerReport of(LoweredLayer lowered, ExecutionStats s) {
        QuantizedLayer l = lowered.layer();
        double gemmMacs = (double) s.macs();
        return new LayerReport(l.name(), (l.dense() ? "dense " : "conv ") + l.geometry() + " " + l.inputDtype() + "→" + l.outputDtype(), lowered.schedule(),
                s.totalCycles(), s.gemmOps(), s.totalCycles() == 0 ? 0 : (double) s.gemmOps() / s.totalCycles(),
                gemmMacs == 0 ? 0 : l.geometry().macs() / gemmMacs, s.aluOps(), s.loaded(BufferKind.INP), s.loaded(BufferKind.WGT),
                s.loaded(BufferKind.ACC), s.loaded(BufferKind.UOP), s.storedBytes());
    }

    public static String header() {
        return String.format("%-18s %-50s %-24s %8s %8s %6s %6s %7s %8s %8s %7s %6s %7s", "layer", "shape", "schedule", "cycles", "gemm", "util",
                "useful", "alu ops", "inp B", "wgt B", "acc B", "uop B", "out B");
    }

    public String row() {
        return String.format("%-18s %-50s %-24s %8d %8d %5.1f%% %5.1f%% %7d %8d %8d %7d %6d %7d", layer, shape, schedule, cycles, gemmCycles,
                100 * utilization, 100 * usefulMacs, aluOps, inputBytes, weightBytes, accBytes, uopBytes, storedBytes);
    }
}
