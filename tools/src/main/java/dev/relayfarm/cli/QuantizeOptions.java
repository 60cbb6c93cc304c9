package dev.relayfarm.cli;

import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.quantize.Calibration;
import dev.relayfarm.quantize.Precision;
import dev.relayfarm.quantize.QuantizeConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import picocli.CommandLine.Option;

/**
 * How to quantize, as options shared by {@code relayc quantize} and {@code relayc compile --quantize int8}: the
 * {@link QuantizeConfig} and where the calibration inputs come from (.npy files for a one-input model, else seeded
 * uniform [0, 1) tensors for every static float input).
 */
final class QuantizeOptions {
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

    /** The config these options describe; a bad value is the user's error, named by its option. */
    QuantizeConfig config() {
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
        try {
            return QuantizeConfig.DEFAULT.withCalibration(mode).withPercentile(percentile).withGlobalScale(globalScale)
                    .withCalibSamples(calibSamples).withRequantize(rq).withPerChannelWeights(!perTensorWeights)
                    .withSkipConvLayers(skipFirst ? Set.of(0) : Set.of())
                    .withMixedPrecision(new QuantizeConfig.MixedPrecision(mixedPoints, wideBits));
        } catch (IllegalArgumentException e) {
            throw new ModelInputException(e.getMessage());
        }
    }

    /** The calibration inputs for {@code typed} ({@code model} names it in errors). */
    List<List<NDArray>> calibrationInputs(IRModule typed, QuantizeConfig config, String model) throws IOException {
        Function main = typed.main().orElseThrow(() -> new ModelInputException(model + " has no @main"));
        List<List<NDArray>> out = new ArrayList<>();
        if (!calib.isEmpty()) {
            if (main.params().size() != 1) throw new ModelInputException("--calib needs a model with one input; " + model + " has " + main.params().size());
            for (Path p : calib.subList(0, Math.min(calib.size(), config.calibSamples()))) out.add(List.of(Npy.read(p)));
            return out;
        }
        if (config.calibration() == Calibration.Mode.GLOBAL_SCALE) return out;
        try {
            return Precision.seededInputs(main, config.calibSamples(), seed);
        } catch (PassException e) {
            throw new ModelInputException(e.getMessage() + "; or give --calib FILE.npy");
        }
    }
}
