package dev.relayfarm.cli;

import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.VtaModelReport;
import java.io.PrintWriter;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc vta MODEL [--search] [--seed N]}: runs a realized quantized model (as {@code relayc quantize} prints it)
 * with its int8 conv2d / dense layers on the VTA-style accelerator SIMULATOR and the rest in the interpreter, on
 * seeded random inputs, and prints each offloaded layer's cycles, GEMM-core utilisation and bytes moved per buffer
 * (see {@link VtaModelReport}). Exit status 1 when the result is not bit-exact with the all-CPU interpreter.
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

    @Override
    public Integer call() throws java.io.IOException {
        IRModule typed = Stages.inferTypes(Stages.importModel(ModelFiles.read(model), InputShapes.of(shapes)));
        Function main = typed.main().orElseThrow(() -> new ModelInputException(model + " has no @main"));
        List<NDArray> inputs = BenchInputs.random(QuantizeCommand.floatInputSpecs(main, "random inputs", "give --shape"), new Random(seed));
        VtaModelReport report = VtaModelReport.measure(typed, VtaConfig.defaults(), search, inputs.toArray(NDArray[]::new));
        PrintWriter out = spec.commandLine().getOut();
        if (report.layers().isEmpty()) {
            out.println(model + ": no int8 conv2d / dense layer to offload (quantize the model first: relayc quantize)");
        } else {
            out.println("VTA SIMULATOR (default config: 1×16×16 GEMM, 8 B/cycle DMA, ALU II 2), " + model + ":");
            out.print(report.table());
        }
        out.flush();
        return report.bitExact() ? 0 : 1;
    }
}
