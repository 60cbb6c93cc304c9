package dev.relayfarm.quantize;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.PassRegistry;
import dev.relayfarm.passes.Sequential;
import java.util.List;

/**
 * Relay's quantization flow as one call: fold-constant (so weights are constants), {@link Annotate},
 * {@link Calibration} on the given inputs, {@link Realize}. The result is a typed module computing with int8
 * inputs / weights and int32 accumulators where the config allows, float32 elsewhere; it goes through the usual
 * optimization and compilation afterwards.
 */
public final class Quantizer {
    private Quantizer() {}

    /** The quantized module, with the intermediate annotated module and the calibrated scales. */
    public record Result(IRModule module, IRModule annotated, Calibration.Result calibration) {}

    public static Result quantize(IRModule module, List<List<NDArray>> calibrationInputs, QuantizeConfig config) {
        IRModule folded = PassRegistry.sequential("quantize-prepare", List.of("fold-constant")).run(module, new PassContext(PassOptions.level(3))).module();
        IRModule annotated = annotate(folded, config);
        Calibration.Result calibrated = Calibration.calibrate(annotated, calibrationInputs, config);
        IRModule realized = new Sequential("quantize-realize", List.of(new Realize(config.requantize())))
                .run(calibrated.module(), new PassContext(PassOptions.level(0))).module();
        return new Result(realized, annotated, calibrated);
    }

    /**
     * A QDQ model's own quantization on our integer path: {@code imported} is the typed import of a model whose
     * activation pairs {@code quantize.qdq.QdqPairs} made quantize points (their scales are the model's, nothing is
     * calibrated); fold-constant turns its dequantized weights into constants, {@link QdqWeights} puts weight points
     * on the convs / denses whose data is quantized, and {@link Realize} makes it integer.
     */
    public static IRModule realizeQdq(IRModule imported, QuantizeConfig.Requantize requantize) {
        IRModule folded = PassRegistry.sequential("quantize-prepare", List.of("fold-constant")).run(imported, new PassContext(PassOptions.level(3))).module();
        return new Sequential("quantize-qdq", List.of(new QdqWeights(), new Realize(requantize))).run(folded, new PassContext(PassOptions.level(0))).module();
    }

    /** {@link Annotate} alone, on a typed module. */
    public static IRModule annotate(IRModule module, QuantizeConfig config) {
        return new Sequential("quantize-annotate", List.of(new Annotate(config))).run(module, new PassContext(PassOptions.level(0))).module();
    }
}
