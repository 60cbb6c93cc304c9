package dev.relayfarm.services.gateway;

import dev.relayfarm.quantize.Precision;
import dev.relayfarm.services.kit.TuneOption;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.target.TargetException;
import dev.relayfarm.pipeline.InputShapeException;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.ShapeProblem;
import java.util.List;
import java.util.Map;

/**
 * The compile-request fields of a submit, read with the library's own parsers ({@link ModelFormat},
 * {@link Target#parse}, {@link InputShapes}), so the gateway and the stages cannot disagree. A field the library
 * rejects becomes a 400 problem naming the field, with the library's diagnostic code as the problem's {@code code}
 * member; checking here turns a typo into a 400 instead of a failed job.
 */
final class SubmitFields {
    /** The problem member that carries a {@link CompileError}'s diagnostic code. */
    static final String CODE = "code";

    private SubmitFields() {}

    /** The explicit {@code format} field of a submit. */
    static ModelFormat format(String name) {
        try {
            return ModelFormat.of(name);
        } catch (ModelInputException e) {
            throw problem(ProblemType.BAD_FORMAT, "format must be 'onnx' or 'relay', got '" + name + "'", e);
        }
    }

    /** The format of an upload without a {@code format} field ({@link ModelFormat#detect}). */
    static ModelFormat detectFormat(String fileName, byte[] bytes) {
        return ModelFormat.detect(fileName, bytes).orElseThrow(() -> new ApiProblem(ProblemType.BAD_FORMAT, "cannot tell the format of model '" + fileName
                + "': not named *.onnx / *.relay, not an ONNX ModelProto (first byte 0x08) and not UTF-8 text;"
                + " name the file or pass format=onnx|relay", Map.of(CODE, ModelFormat.UNKNOWN_FORMAT)));
    }

    /** The {@code target} field, parsed. */
    static Target target(String text) {
        try {
            return Target.parse(text);
        } catch (TargetException e) {
            throw problem(ProblemType.BAD_TARGET, "target: " + e.getMessage(), e);
        }
    }

    /** The {@code tune} field: off, apply (the default) or budget=DURATION ({@link TuneOption}). */
    static TuneOption tune(String tune) {
        try {
            return TuneOption.parse(tune);
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(ProblemType.BAD_TUNE, e.getMessage(), Map.of(CODE, "invalid-tune"));
        }
    }

    /** The {@code quantize} field: float (the default) or int8 ({@link Precision}). */
    static Precision quantize(String quantize) {
        if (quantize == null || quantize.isBlank()) return Precision.FLOAT;
        try {
            return Precision.parse(quantize);
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(ProblemType.BAD_QUANTIZE, e.getMessage(), Map.of(CODE, "invalid-quantize"));
        }
    }

    /** The {@code shapes} field: comma-separated {@code NAME=D0xD1x...} entries ({@link InputShapes#parse}); empty when blank. */
    static Map<String, List<Long>> shapes(String shapes) {
        try {
            return InputShapes.parse(shapes);
        } catch (InputShapeException e) {
            throw problem(ProblemType.BAD_SHAPES, "shapes: entry '" + e.problem().entry() + "' " + why(e.problem())
                    + " (expected NAME=D0xD1x..., entries separated by commas, e.g. x=1x3x224x224)", e);
        }
    }

    private static String why(ShapeProblem p) {
        return switch (p) {
            case ShapeProblem.Empty e -> "is empty";
            case ShapeProblem.Malformed m -> "is malformed";
            case ShapeProblem.Unnamed u -> "has no input name";
            case ShapeProblem.Undimensioned u -> "has no dimensions";
            case ShapeProblem.NotPositive n -> "has a dimension below 1";
            case ShapeProblem.Overflow o -> "has an element count that overflows a 64-bit count";
            case ShapeProblem.Duplicate d -> "names input '" + d.name() + "' a second time";
        };
    }

    static ApiProblem problem(ProblemType type, String detail, CompileError cause) {
        return new ApiProblem(type, detail, Map.of(CODE, cause.diagnostic().code()));
    }
}
