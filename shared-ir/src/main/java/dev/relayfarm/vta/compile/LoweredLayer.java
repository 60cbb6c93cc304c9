package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.ExecutionStats;
import dev.relayfarm.vta.Instruction;
import dev.relayfarm.vta.InstructionCodec;
import dev.relayfarm.vta.InstructionWord;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.VtaSimulator;
import java.util.List;

/**
 * A layer compiled for the simulated accelerator: its instruction stream and the DRAM image holding its micro-ops,
 * packed weights and epilogue constants; {@link #run} adds an input, runs the SIMULATOR and unpacks the output.
 */
public record LoweredLayer(QuantizedLayer layer, VtaSchedule schedule, VtaConfig config, List<Instruction> program, BlockedLayout layout,
        byte[] dramTemplate) {
    public LoweredLayer {
        program = List.copyOf(program);
    }

    /** What one run computed and what it cost. */
    public record Run(NDArray output, ExecutionStats stats) {
    }

    public Run run(NDArray input) {
        byte[] dram = dramTemplate.clone();
        layout.putInput(dram, layer, input);
        ExecutionStats stats = new VtaSimulator(config).run(program, dram).stats();
        return new Run(layout.output(dram, layer), stats);
    }

    /** The program as 128-bit instruction words, as an artifact would carry it. */
    public List<InstructionWord> encoded() {
        return program.stream().map(InstructionCodec::encode).toList();
    }
}
