package dev.relayfarm.cli;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.quantize.Calibration;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.text.RelayPrinter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc quantize MODEL [-o out.relay] [--calibration kl|minmax|percentile|global] [--calib-samples N]
 * [--calib FILE.npy ...] [--skip-first | --no-skip-first] [--mixed-precision K [--wide-bits B]]}: imports and type-checks the model, quantizes it
 * (annotate, calibrate, realize; see {@link Quantizer}) and prints the integer program as Relay text. Calibration
 * inputs are the given .npy files (a model with one input), else seeded uniform [0, 1) tensors for every static
 * float input. A summary of the calibrated scales goes to stderr.
 */
@Command(name = "quantize", mixinStandardHelpOptions = true,
        description = "Quantize a model to int8 (annotate, calibrate, realize) and print it as Relay text.")
public final class QuantizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "Relay text (.relay) or ONNX model (.onnx).")
    String model;

    @Option(names = "--shape", paramLabel = "NAME=D0xD1x...", description = "Bind the dynamic dims of graph input NAME (repeatable).")
    List<String> shapes = List.of();

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write the Relay text here instead of standard output.")
    Path output;

    @Mixin
    QuantizeOptions quantize;

    @Override
    public Integer call() throws IOException {
        QuantizeConfig config = quantize.config();
        IRModule typed = Stages.inferTypes(Stages.importModel(ModelFiles.read(model), InputShapes.of(shapes)));
        List<List<NDArray>> inputs = quantize.calibrationInputs(typed, config, model);
        Quantizer.Result r = Quantizer.quantize(typed, inputs, config);
        String text = RelayPrinter.print(r.module());
        if (output == null) {
            PrintWriter out = spec.commandLine().getOut();
            out.print(text);
            out.flush();
        } else {
            Files.writeString(output, text, StandardCharsets.UTF_8);
        }
        PrintWriter err = spec.commandLine().getErr();
        err.println("quantized " + model + ": " + config.calibration().name().toLowerCase(Locale.ROOT) + " calibration on " + inputs.size() + " inputs, "
                + r.calibration().points().size() + " quantize points");
        for (Calibration.PointScale p : r.calibration().points()) {
            double max = 0;
            for (double t : p.thresholds()) max = Math.max(max, t);
            err.printf(Locale.ROOT, "  %-10s %s threshold %.6g%s%n", p.kind(), p.scales().length > 1 ? p.scales().length + " channels, max" : "", max, p.nbit() > 8 ? " (" + p.nbit() + " bits)" : "");
        }
        err.flush();
        return 0;
    }
}
