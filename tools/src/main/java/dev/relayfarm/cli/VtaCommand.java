package dev.relayfarm.cli;

import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.quantize.Precision;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.VtaModelReport;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.tuning.SimulatorMeasurer;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaLayerTasks;
import dev.relayfarm.vta.tuning.VtaRecords;
import dev.relayfarm.vta.tuning.VtaTuner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc vta MODEL [--search] [--records FILE] [--seed N]}: runs a realized quantized model (as {@code relayc quantize} prints it)
 * with its int8 conv2d / dense layers on the VTA-style accelerator SIMULATOR and the rest in the interpreter, on
 * seeded random inputs, and prints each offloaded layer's cycles, GEMM-core utilisation and bytes moved per buffer
 * (see {@link VtaModelReport}). With {@code --records FILE} the schedules are tuning records ({@link VtaTuner},
 * {@link VtaRecords}): {@code --search} appends what is not measured yet, and each layer runs its best stored schedule.
 * Exit status 1 when the result is not bit-exact with the all-CPU interpreter.
 */
@Command(name = "vta", mixinStandardHelpOptions = true,
        description = "Run a quantized model's int8 layers on the VTA-style accelerator simulator and report cycles per layer.")
public final class VtaCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A quantized model: Relay text from `relayc quantize` (or ONNX already integer).")
    String model;

    @Option(names = "--shape", paramLabel = "NAME=D0xD1x...", description = "Bind the dynamic dims of graph input NAME (repeatable).")
    List<String> shapes = List.of();

    @Option(names = "--search", description = "Also grid-search each layer's schedule (tile sizes, virtual threads) by simulated cycles.")
    boolean search;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the random inputs (default 0).")
    long seed;

    @Option(names = "--records", paramLabel = "FILE", description = "Tuning records (JSON lines, device class vta-sim-1x16x16, cost = simulated "
            + "cycles at 100 MHz): with --search, append each layer workload's schedules not yet in FILE; the best stored schedule of each "
            + "layer is applied (the default where FILE has none).")
    Path records;

    @Override
    public Integer call() throws java.io.IOException {
        IRModule typed = Stages.inferTypes(Stages.importModel(ModelFiles.read(model), InputShapes.of(shapes)));
        Function main = typed.main().orElseThrow(() -> new ModelInputException(model + " has no @main"));
        List<NDArray> inputs;
        try {
            inputs = Precision.seededInputs(main, 1, seed).getFirst();
        } catch (PassException e) {
            throw new ModelInputException(e.getMessage() + "; give --shape");
        }
        PrintWriter out = spec.commandLine().getOut();
        VtaConfig config = VtaConfig.defaults();
        VtaModelReport report = records == null ? VtaModelReport.measure(typed, config, search, inputs.toArray(NDArray[]::new))
                : withRecords(typed, config, out, inputs.toArray(NDArray[]::new));
        if (report.layers().isEmpty()) {
            out.println(model + ": no int8 conv2d / dense layer to offload (quantize the model first: relayc quantize)");
        } else {
            out.println("VTA SIMULATOR (default config: 1×16×16 GEMM, 8 B/cycle DMA, ALU II 2), " + model + ":");
            out.print(report.table());
        }
        out.flush();
        return report.bitExact() ? 0 : 1;
    }

    /**
     * Tunes (with {@code --search}) the workloads' schedules not yet in the records file through the simulator,
     * appending records, then runs the model with the best stored schedule per layer: a second run over the same file
     * measures nothing and applies what the first found.
     */
    private VtaModelReport withRecords(IRModule typed, VtaConfig config, PrintWriter out, NDArray[] inputs) throws IOException {
        List<VtaLayerTask> tasks = VtaLayerTasks.of(typed, config);
        if (!search && !Files.isRegularFile(records)) {
            throw new ModelInputException("--records " + records + ": no such file (run with --search to write it)");
        }
        List<TuningRecord> prior = Files.isRegularFile(records) ? RecordFile.read(records) : List.of();
        if (search) {
            for (VtaTuner.Outcome o : new VtaTuner(new SimulatorMeasurer(), records, new VtaTuner.Options(8, 0), null).tune(tasks, prior)) {
                out.printf("%s: %d schedules measured (%s)%n", o.task().key(), o.measured(), o.note());
            }
        }
        List<TuningRecord> stored = search ? RecordFile.read(records) : prior;
        long applied = tasks.stream().filter(t -> VtaRecords.best(t, stored).isPresent()).count();
        out.printf("%s: stored schedules for %d of %d layer workloads (%d records)%n", records, applied, tasks.size(), stored.size());
        return VtaModelReport.measure(typed, config, VtaRecords.schedules(tasks, stored, config), inputs);
    }
}
