package dev.relayfarm.frontend;

import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.Map;

/**
 * How to import an ONNX model.
 *
 * @param inputShapes shapes that bind graph inputs' dynamic dims, by input name (from
 *     {@code --shape x=1x3x224x224}, read by {@code pipeline.InputShapes}); a dim left dynamic becomes {@code Any}, and
 *     so does a dim given as {@link #ANY_DIM} ({@code ?} in {@code --shape x=1x3x48x?}) unless the model fixes it
 * @param foldConstants evaluate nodes whose inputs are all constants at import time (shape
 *     subgraphs, weight transforms), so the program stays static where the model is
 * @param foldLimitBytes largest folded result kept as a constant
 * @param frozenInputs graph inputs bound to constant values, by input name: they stop being
 *     parameters of {@code @main}. Operators such as Reshape or ReduceSum need their shape/axes
 *     operands at import time; a model (or an ONNX test) that feeds them as graph inputs can only be
 *     imported once they are frozen (see {@link NeedsConstantException})
 * @param valueLayouts the length and element shapes of sequence graph inputs, and whether optional graph
 *     inputs hold a value, by input name: required for every such input (sequences import as tuples of
 *     static length, see {@link ValueLayout})
 */
public record ImportOptions(Map<String, List<Long>> inputShapes, boolean foldConstants, long foldLimitBytes,
                            Map<String, NDArray> frozenInputs, Map<String, ValueLayout> valueLayouts) {
    /** A dim of {@link #inputShapes} that stays as the model declares it: dynamic ({@code Any}) or the model's size. */
    public static final long ANY_DIM = -1;

    public static final ImportOptions DEFAULT = new ImportOptions(Map.of(), true, 256L << 20, Map.of(), Map.of());

    public ImportOptions {
        inputShapes = Map.copyOf(inputShapes);
        frozenInputs = Map.copyOf(frozenInputs);
        valueLayouts = Map.copyOf(valueLayouts);
    }

    public ImportOptions(Map<String, List<Long>> inputShapes, boolean foldConstants, long foldLimitBytes, Map<String, NDArray> frozenInputs) {
        this(inputShapes, foldConstants, foldLimitBytes, frozenInputs, Map.of());
    }

    public ImportOptions withInputShapes(Map<String, List<Long>> shapes) {
        return new ImportOptions(shapes, foldConstants, foldLimitBytes, frozenInputs, valueLayouts);
    }

    public ImportOptions withFrozenInputs(Map<String, NDArray> frozen) {
        return new ImportOptions(inputShapes, foldConstants, foldLimitBytes, frozen, valueLayouts);
    }

    public ImportOptions withValueLayouts(Map<String, ValueLayout> layouts) {
        return new ImportOptions(inputShapes, foldConstants, foldLimitBytes, frozenInputs, layouts);
    }
}
