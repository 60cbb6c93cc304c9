package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ops.layout.Layout;
import java.util.List;
import java.util.function.Function;

/**
 * What a layout hook decided for one call: for each argument, the layout the original call reads it
 * in and the layout the new call wants it in; the layout of the original result and of the new one;
 * and how to build the new call from the arguments once they are in the wanted layouts.
 *
 * <pre>
 * conv2d NCHW/OIHW -> NHWC/HWIO: inputsOriginal [NCHW, OIHW], inputsWanted [NHWC, HWIO],
 *                                outputOriginal NCHW, outputNew NHWC, build = nn.conv2d(.., data_layout="NHWC", ..)
 * </pre>
 */
public record LayoutChange(List<Layout> inputsOriginal, List<Layout> inputsWanted, Layout outputOriginal, Layout outputNew,
                           Function<List<Expr>, Expr> build) {
    public LayoutChange {
        inputsOriginal = List.copyOf(inputsOriginal);
        inputsWanted = List.copyOf(inputsWanted);
        if (inputsOriginal.size() != inputsWanted.size()) throw new IllegalArgumentException("one wanted layout per input");
    }
}
