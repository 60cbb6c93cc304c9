package dev.relayfarm.frontend;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.List;

/**
 * ONNX loss operators. They are listed with the training operators but are plain functions of
 * their inputs, so they convert like any other: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (= log_softmax over the classes, then the same NLL), with optional class
 * weights, ignore_index and reduction none / sum / mean (mean divides by the total weight of the
 * targets that are not ignored).
 */
final class LossConverters {
    private LossConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("NegativeLogLikelihoodLoss", n -> List.of(nll(n, n.input(0))));
        b.add("SoftmaxCrossEntropyLoss", n -> {
            Expr logProb = n.call("nn.log_softmax", List.of(n.input(0)), "axis", 1L);
            List<Expr> outs = new ArrayList<>();
            outs.add(nll(n, logProb));
            if (n.hasOutput(1)) outs.add(logProb);
            return outs;
        });
    }

    /**
     * loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]], 0 where the target is
     * ignore_index. Input is [N, C, d...], target [N, d...].
     */
    private static Expr nll(OnnxNode n, Expr input) {
        String reduction = n.attrString("reduction", "mean");
        if (!List.of("none", "sum", "mean").contains(reduction)) throw n.unsupported("reduction=" + reduction + " is not supported");
        TensorType x = n.inputType(0);
        if (x.rank() < 2) throw n.unsupported("input must have rank >= 2 (N, C, ...), got " + x);
        Expr target = n.input(1);
        boolean ignoring = n.hasAttr("ignore_index");
        long ignoreIndex = n.attrInt("ignore_index", 0);
        Expr mask = null;
        if (ignoring) {
            Expr ii = ElementwiseConverters.scalarLike(n, 1, ignoreIndex);
            mask = n.call("not_equal", target, ii);
            // an ignored target may be out of range: gather a valid class instead and zero it below
            target = n.call("where", mask, target, ElementwiseConverters.scalarLike(n, 1, 0));
        }
        Expr picked = n.call("gather", List.of(input, n.call("expand_dims", List.of(target), "axis", 1L, "num_newaxis", 1L)), "axis", 1L);
        picked = n.call("squeeze", List.of(picked), "axis", new long[] {1});
        Expr weight = n.hasInput(2) ? n.call("take", List.of(n.input(2), target), "axis", 0L, "mode", "fast") : null;
        if (mask != null) {
            Expr m = n.call("cast", List.of(mask), "dtype", x.dtype().toString());
            weight = weight == null ? m : n.call("multiply", weight, m);
        }
        Expr loss = n.call("negative", picked);
        if (weight != null) loss = n.call("multiply", loss, weight);
        return switch (reduction) {
            case "none" -> loss;
            case "sum" -> n.call("sum", List.of(loss), "axis", null, "keepdims", false);
            default -> weight == null
                    ? n.call("mean", List.of(loss), "axis", null, "keepdims", false)
                    : n.call("divide", n.call("sum", List.of(loss), "axis", null, "keepdims", false),
                            n.call("sum", List.of(weight), "axis", null, "keepdims", false));
        };
    }
}
