package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import java.util.ArrayList;
import java.util.List;

/**
 * The optimizers of the {@code ai.onnx.preview.training} domain — Adagrad, Adam and Momentum — as
 * element-wise Relay arithmetic. Each takes the learning rate R and the update count T (scalars),
 * then n tensors to optimize followed by their gradients and their accumulated state, and returns
 * the updated tensors followed by the updated state, one formula per tensor (the spec's):
 * <pre>
 * Adagrad:  r = R / (1 + T·decay_factor);  g = norm_coefficient·X + G;  H' = H + g²;
 *           X' = X − r·g / (√H' + epsilon)
 * Adam:     g = norm_coefficient·X + G;  V' = alpha·V + (1−alpha)·g;  H' = beta·H + (1−beta)·g²;
 *           r = T > 0 ? R·√(1−beta^T) / (1−alpha^T) : R;
 *           X' = (1 − norm_coefficient_post)·(X − r·V' / (√H' + epsilon))
 * Momentum: g = norm_coefficient·X + G;  b = T > 0 ? beta : 1;  V' = alpha·V + b·g;
 *           X' = X − R·V' (standard) or X − R·(g + alpha·V') (nesterov)
 * </pre>
 * R and T are cast to each tensor's dtype, so a float64 tensor is updated in float64.
 */
final class TrainingConverters {
    static final String DOMAIN = "ai.onnx.preview.training.";

    private TrainingConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add(DOMAIN + "Adagrad", TrainingConverters::adagrad);
        b.add(DOMAIN + "Adam", TrainingConverters::adam);
        b.add(DOMAIN + "Momentum", TrainingConverters::momentum);
    }

    /** The number of optimized tensors: the inputs after R and T come in {@code groups} lists of equal length. */
    private static int tensorCount(OnnxNode n, int groups, String lists) {
        int rest = n.inputCount() - 2;
        if (rest < groups || rest % groups != 0) {
            throw n.unsupported("expects R, T and " + groups + " lists of equal length (" + lists + "), got " + n.inputCount() + " inputs");
        }
        for (int i = 0; i < n.inputCount(); i++) n.input(i); // none may be missing
        int count = rest / groups;
        if (n.outputCount() > (groups - 1) * count) {
            throw n.unsupported("has " + n.outputCount() + " outputs, at most " + (groups - 1) * count + " for " + count + " tensors");
        }
        return count;
    }

    private static Expr scalar(DType t, double v) {
        return NormConverters.scalar(t, v);
    }

    /** Scalar input {@code i} (R or T) in dtype {@code t}. */
    private static Expr scalarInput(OnnxNode n, int i, DType t) {
        if (n.inputRank(i) != 0 && n.inputType(i).shape().stream().anyMatch(d -> !d.isStatic() || d.value() != 1)) {
            throw n.unsupported("input " + i + " must be a scalar, got " + n.inputType(i));
        }
        Expr e = n.inputRank(i) == 0 ? n.input(i) : n.call("reshape", List.of(n.input(i)), "newshape", new long[0]);
        return n.inputType(i).dtype().equals(t) ? e : MathConverters.cast(n, e, t);
    }

    private static DType floatType(OnnxNode n, int i) {
        DType t = n.inputType(i).dtype();
        if (!t.isFloat()) throw n.unsupported("input " + i + " must be a floating-point tensor, got " + t);
        return t;
    }

    /** norm_coefficient·X + G, leaving out the product when the coefficient is 0. */
    private static Expr regularized(OnnxNode n, Expr x, Expr g, DType t, double normCoefficient) {
        return normCoefficient == 0 ? g : n.call("add", n.call("multiply", scalar(t, normCoefficient), x), g);
    }

    private static List<Expr> adagrad(OnnxNode n) {
        int count = tensorCount(n, 3, "X, G, H");
        double decay = n.attrFloat("decay_factor", 0f), eps = n.attrFloat("epsilon", 1e-6f), norm = n.attrFloat("norm_coefficient", 0f);
        List<Expr> xs = new ArrayList<>(), hs = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            DType t = floatType(n, 2 + k);
            Expr r = n.call("divide", scalarInput(n, 0, t), n.call("add", scalar(t, 1), n.call("multiply", scalarInput(n, 1, t), scalar(t, decay))));
            Expr x = n.input(2 + k), g = regularized(n, x, n.input(2 + count + k), t, norm), h = n.input(2 + 2 * count + k);
            Expr hNew = n.call("add", h, n.call("multiply", g, g));
            Expr adaptive = n.call("add", n.call("sqrt", hNew), scalar(t, eps));
            xs.add(n.call("subtract", x, n.call("divide", n.call("multiply", r, g), adaptive)));
            hs.add(hNew);
        }
        xs.addAll(hs);
        return xs;
    }

    private static List<Expr> adam(OnnxNode n) {
        int count = tensorCount(n, 4, "X, G, V, H");
        double alpha = n.attrFloat("alpha", 0.9f), beta = n.attrFloat("beta", 0.999f), eps = n.attrFloat("epsilon", 1e-6f);
        double norm = n.attrFloat("norm_coefficient", 0f), post = n.attrFloat("norm_coefficient_post", 0f);
        List<Expr> xs = new ArrayList<>(), vs = new ArrayList<>(), hs = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            DType t = floatType(n, 2 + k);
            Expr x = n.input(2 + k), g = regularized(n, x, n.input(2 + count + k), t, norm);
            Expr v = n.input(2 + 2 * count + k), h = n.input(2 + 3 * count + k);
            Expr vNew = n.call("add", n.call("multiply", scalar(t, alpha), v), n.call("multiply", scalar(t, 1 - alpha), g));
            Expr hNew = n.call("add", n.call("multiply", scalar(t, beta), h), n.call("multiply", scalar(t, 1 - beta), n.call("multiply", g, g)));
            Expr hSqrt = n.call("add", n.call("sqrt", hNew), scalar(t, eps));
            Expr r = scalarInput(n, 0, t), tt = scalarInput(n, 1, t);
            Expr adjusted = n.call("divide", n.call("multiply", r, n.call("sqrt", n.call("subtract", scalar(t, 1), n.call("power", scalar(t, beta), tt)))),
                    n.call("subtract", scalar(t, 1), n.call("power", scalar(t, alpha), tt)));
            Expr rate = n.call("where", n.call("greater", tt, scalar(t, 0)), adjusted, r);
            Expr xNew = n.call("subtract", x, n.call("multiply", rate, n.call("divide", vNew, hSqrt)));
            xs.add(post == 0 ? xNew : n.call("multiply", scalar(t, 1 - post), xNew));
            vs.add(vNew);
            hs.add(hNew);
        }
        xs.addAll(vs);
        xs.addAll(hs);
        return xs;
    }

    private static List<Expr> momentum(OnnxNode n) {
        int count = tensorCount(n, 3, "X, G, V");
        for (String required : List.of("alpha", "beta", "mode", "norm_coefficient")) {
            if (!n.hasAttr(required)) throw n.unsupported("attribute '" + required + "' is required");
        }
        double alpha = n.attrFloat("alpha", 0f), beta = n.attrFloat("beta", 0f), norm = n.attrFloat("norm_coefficient", 0f);
        String mode = n.attrString("mode", "");
        if (!mode.equals("standard") && !mode.equals("nesterov")) throw n.unsupported("mode must be 'standard' or 'nesterov', got '" + mode + "'");
        List<Expr> xs = new ArrayList<>(), vs = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            DType t = floatType(n, 2 + k);
            Expr x = n.input(2 + k), g = regularized(n, x, n.input(2 + count + k), t, norm), v = n.input(2 + 2 * count + k);
            Expr b = n.call("where", n.call("greater", scalarInput(n, 1, t), scalar(t, 0)), scalar(t, beta), scalar(t, 1));
            Expr vNew = n.call("add", n.call("multiply", scalar(t, alpha), v), n.call("multiply", b, g));
            Expr step = mode.equals("standard") ? vNew : n.call("add", g, n.call("multiply", scalar(t, alpha), vNew));
            xs.add(n.call("subtract", x, n.call("multiply", scalarInput(n, 0, t), step)));
            vs.add(vNew);
        }
        xs.addAll(vs);
        return xs;
    }
}
