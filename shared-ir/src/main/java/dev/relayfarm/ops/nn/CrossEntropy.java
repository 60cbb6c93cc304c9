package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * TVM's loss operators over {@code (batch, classes)} tensors of one float type, each giving a scalar of that dtype:
 * {@code nn.cross_entropy(predictions, targets) = -sum(log(predictions) * targets) / batch} (predictions are
 * probabilities) and {@code nn.cross_entropy_with_logits(predictions, targets) = -sum(predictions * targets) / batch}
 * (TVM's name, although its predictions are log-probabilities, e.g. {@code nn.log_softmax}'s result: no log is taken).
 * The kernel sums in double and rounds once to the dtype, as the reductions do.
 */
public final class CrossEntropy {
    public static final String NAME = "nn.cross_entropy";
    public static final String WITH_LOGITS = "nn.cross_entropy_with_logits";

    private CrossEntropy() {}

    public static OpDef<NoAttrs> crossEntropy() {
        return def(NAME, true);
    }

    public static OpDef<NoAttrs> withLogits() {
        return def(WITH_LOGITS, false);
    }

    private static OpDef<NoAttrs> def(String name, boolean log) {
        return new OpDef<>(name, 2, a -> NoAttrs.parse(name, a), (types, n, a, rep) -> relation(name, types, rep), OpPattern.OPAQUE,
                (in, a) -> List.of(compute(name, in.get(0), in.get(1), log)));
    }

    static boolean relation(String op, List<Type> types, TypeReporter reporter) {
        TensorType p = Rel.tensorOfRank(op, "predictions", types.get(0), 2);
        TensorType t = Rel.tensorOfRank(op, "targets", types.get(1), 2);
        if (p == null && t == null) return false;
        TensorType known = p != null ? p : t;
        if (!known.dtype().isFloat()) throw new RelationException(op + ": " + (p != null ? "predictions" : "targets") + " must be a float tensor, got " + known);
        if (p != null && t != null) {
            boolean differ = !p.dtype().equals(t.dtype()) || Rel.surelyDiffer(p.shape().get(0), t.shape().get(0))
                    || Rel.surelyDiffer(p.shape().get(1), t.shape().get(1));
            if (differ) throw new RelationException(op + ": predictions " + p + " and targets " + t + " must have the same type");
        }
        // Both inputs have one type: what is known of either is learnt for the other (and symbols unify).
        reporter.assign(types.get(p == null ? 0 : 1), known);
        reporter.assign(types.get(2), new TensorType(List.of(), known.dtype()));
        return true;
    }

    static NDArray compute(String op, NDArray predictions, NDArray targets, boolean log) {
        if (predictions.rank() != 2 || !java.util.Arrays.equals(predictions.shape(), targets.shape())) {
            throw new IllegalArgumentException(op + ": predictions " + Arrays2.show(predictions.shape()) + " and targets "
                    + Arrays2.show(targets.shape()) + " must be equal 2-D shapes");
        }
        double[] p = Arrays2.doubles(predictions), t = Arrays2.doubles(targets);
        double sum = 0;
        for (int i = 0; i < p.length; i++) sum += (log ? Math.log(p[i]) : p[i]) * t[i];
        return Arrays2.fromDoubles(predictions.dtype(), new int[0], new double[] {-sum / predictions.dim(0)});
    }
}
