package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Type;
import dev.relayfarm.kernel.compute.Elementwise;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.ClipAttrs;
import dev.relayfarm.ops.OpRegistry;
import dev.relayfarm.ops.nn.BiasAdd;
import java.util.List;

/**
 * The compute definitions of non-anchor operators inside a group (element-wise, broadcast, injective
 * epilogues and prologues). Anchors with templates are built by {@link Anchors}.
 */
final class GroupComputes {
    private GroupComputes() {}

    static List<Compute> compute(String op, List<Tensor> inputs, Attrs attrs, Type outType) {
        return switch (op) {
            case "add", "subtract", "multiply", "divide", "maximum", "minimum" -> List.of(Elementwise.binary(op, inputs.get(0), inputs.get(1)));
            case "nn.relu", "exp", "tanh", "sqrt", "log", "abs", "negative", "sigmoid" -> List.of(Elementwise.unary(op, inputs.getFirst()));
            case "clip" -> {
                ClipAttrs a = ClipAttrs.parse(attrs);
                yield List.of(Elementwise.clip(inputs.getFirst(), a.aMin(), a.aMax()));
            }
            case "nn.bias_add" -> {
                BiasAdd.BiasAddAttrs a = (BiasAdd.BiasAddAttrs) OpRegistry.get(op).parseAttrs(attrs);
                yield List.of(Elementwise.biasAdd(inputs.get(0), inputs.get(1), a.axis()));
            }
            default -> throw new UnsupportedOperationException(op);
        };
    }

    static boolean supports(String op) {
        return switch (op) {
            case "add", "subtract", "multiply", "divide", "maximum", "minimum", "nn.relu", "exp", "tanh", "sqrt", "log", "abs", "negative", "sigmoid",
                 "clip", "nn.bias_add" -> true;
            default -> false;
        };
    }
}
