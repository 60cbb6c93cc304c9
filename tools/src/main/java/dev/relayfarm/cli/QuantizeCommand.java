package dev.relayfarm.cli;

import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
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

    @Option(names = "--calibration", paramLabel = "MODE", description = "kl (default), minmax, percentile or global.")
    String calibration = "kl";

    @Option(names = "--percentile", paramLabel = "P", description = "For --calibration percentile (default 99.99).")
    double percentile = 99.99;

    @Option(names = "--global-scale", paramLabel = "S", description = "For --calibration global: activations in [-S, S] (default 8).")
    double globalScale = 8.0;

    @Option(names = "--calib-samples", paramLabel = "N", description = "Calibration inputs to use, at most 64 (default 64).")
    int calibSamples = 64;

    @Option(names = "--calib", paramLabel = "FILE.npy", description = "A calibration input for a one-input model (repeatable).")
    List<Path> calib = List.of();

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the random calibration inputs (default 0).")
    long seed;

    // picocli: a negatable option that is true by default needs both values true, or --skip-first would turn it off
    @Option(names = "--skip-first", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Keep the first conv2d in float32 (default: true, as TVM; --no-skip-first quantizes it too).")
    boolean skipFirst;

    @Option(names = "--requantize", paramLabel = "KIND", description = "fixed-point (default) or float.")
    String requantize = "fixed-point";

    @Option(names = "--per-tensor-weights", description = "One scale per weight tensor instead of one per output channel.")
    boolean perTensorWeights;

    @Option(names = "--mixed-precision", paramLabel = "K", description = "Give the K activation points whose quantization alone disturbs the output most "
            + "on the calibration inputs 16-bit tensors instead of 8 (default 0; costs one interpreter run per point and input, on up to 16 inputs).")
    int mixedPoints;

    @Option(names = "--wide-bits", paramLabel = "B", description = "Bits of the points --mixed-precision widens, 9 to 16 (default 16).")
    int wideBits = 16;

    @Override
    public Integer call() throws IOException {
        Calibration.Mode mode = switch (calibration.toLowerCase(Locale.ROOT)) {
            case "kl" -> Calibration.Mode.KL;
            case "minmax" -> Calibration.Mode.MINMAX;
            case "percentile" -> Calibration.Mode.PERCENTILE;
            case "global" -> Calibration.Mode.GLOBAL_SCALE;
            default -> throw new ModelInputException("--calibration must be kl, minmax, percentile or global, got '" + calibration + "'");
        };
        QuantizeConfig.Requantize rq = switch (requantize.toLowerCase(Locale.ROOT)) {
            case "fixed-point" -> QuantizeConfig.Requantize.FIXED_POINT;
            case "float" -> QuantizeConfig.Requantize.FLOAT;
            default -> throw new ModelInputException("--requantize must be fixed-point or float, got '" + requantize + "'");
        };
        if (calibSamples < 1 || calibSamples > 64) throw new ModelInputException("--calib-samples must be in [1, 64], got " + calibSamples);
        QuantizeConfig config;
        try {
            config = QuantizeConfig.DEFAULT.withCalibration(mode).withPercentile(percentile).withGlobalScale(globalScale)
                    .withCalibSamples(calibSamples).withRequantize(rq).withPerChannelWeights(!perTensorWeights)
                    .withSkipConvLayers(skipFirst ? Set.of(0) : Set.of())
                    .withMixedPrecision(new QuantizeConfig.MixedPrecision(mixedPoints, wideBits));
        } catch (IllegalArgumentException e) {
            throw new ModelInputException(e.getMessage());
        }
        IRModule typed = Stages.inferTypes(Stages.importModel(ModelFiles.read(model), InputShapes.of(shapes)));
        List<List<NDArray>> inputs = calibrationInputs(typed, config);
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
        err.println("quantized " + model + ": " + mode.name().toLowerCase(Locale.ROOT) + " calibration on " + inputs.size() + " inputs, "
                + r.calibration().points().size() + " quantize points");
        for (Calibration.PointScale p : r.calibration().points()) {
            double max = 0;
            for (double t : p.thresholds()) max = Math.max(max, t);
            err.printf(Locale.ROOT, "  %-10s %s threshold %.6g%s%n", p.kind(), p.scales().length > 1 ? p.scales().length + " channels, max" : "", max, p.nbit() > 8 ? " (" + p.nbit() + " bits)" : "");
        }
        err.flush();
        return 0;
    }

    private List<List<NDArray>> calibrationInputs(IRModule typed, QuantizeConfig config) throws IOException {
        Function main = typed.main().orElseThrow(() -> new ModelInputException(model + " has no @main"));
        List<List<NDArray>> out = new ArrayList<>();
        if (!calib.isEmpty()) {
            if (main.params().size() != 1) throw new ModelInputException("--calib needs a model with one input; " + model + " has " + main.params().size());
            for (Path p : calib.subList(0, Math.min(calib.size(), config.calibSamples()))) out.add(List.of(Npy.read(p)));
            return out;
        }
        if (config.calibration() == Calibration.Mode.GLOBAL_SCALE) return out;
        List<TensorSpec> specs = floatInputSpecs(main, "random calibration inputs", "give --calib FILE.npy or --shape");
        Random r = new Random(seed);
        for (int s = 0; s < config.calibSamples(); s++) out.add(BenchInputs.random(specs, r));
        return out;
    }

    /** The inputs of {@code main} as specs for seeded random tensors; each must be a static float tensor. */
    static List<TensorSpec> floatInputSpecs(Function main, String what, String hint) {
        List<TensorSpec> specs = new ArrayList<>();
        for (Var v : main.params()) {
            if (!(v.annotation() instanceof TensorType t) || !t.dtype().isFloat() || !t.isStatic()) {
                throw new ModelInputException(what + " need static float tensor inputs; %" + v.name() + " is " + v.annotation() + " (" + hint + ")");
            }
            specs.add(new TensorSpec(v.name(), t.shape().stream().map(d -> (int) d.value()).toList(), t.dtype()));
        }
        return specs;
    }
}
