package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.List;

/** ONNX element-wise and broadcasting operators: arithmetic, comparisons, activations, Cast, Clip, Where. */
final class ElementwiseConverters {
    private ElementwiseConverters() {}

    static void register(OnnxConverters.Builder b) {
        binary(b, "Add", "add");
        binary(b, "Sub", "subtract");
        binary(b, "Mul", "multiply");
        binary(b, "Div", "divide");
        binary(b, "Equal", "equal");
        binary(b, "Less", "less");
        binary(b, "LessOrEqual", "less_equal");
        binary(b, "Greater", "greater");
        binary(b, "GreaterOrEqual", "greater_equal");
        binary(b, "And", "logical_and");
        binary(b, "Or", "logical_or");
        unary(b, "Relu", "nn.relu");
        unary(b, "Sigmoid", "sigmoid");
        unary(b, "Tanh", "tanh");
        unary(b, "Exp", "exp");
        unary(b, "Log", "log");
        unary(b, "Sqrt", "sqrt");
        unary(b, "Abs", "abs");
        unary(b, "Neg", "negative");
        unary(b, "Floor", "floor");
        unary(b, "Ceil", "ceil");
        unary(b, "Sin", "sin");
        unary(b, "Cos", "cos");
        unary(b, "Erf", "erf");
        unary(b, "Sign", "sign");
        unary(b, "Not", "logical_not");
        b.add("Identity", n -> {
            n.recordOutputKind(0, n.inputKind(0)); // a sequence or optional stays one
            return List.of(n.input(0));
        });
        b.add("Reciprocal", n -> List.of(n.call("divide", scalarLike(n, 0, 1.0), n.input(0))));
        b.add("Where", n -> List.of(n.call("where", n.input(0), n.input(1), n.input(2))));
        b.add("Cast", n -> {
            long to = n.attrInt("to", -1);
            DType dtype = OnnxDTypes.require((int) to, n.where() + ": attribute 'to'");
            return List.of(MathConverters.onnxCast(n, n.input(0), dtype));
        });
        b.add("LeakyRelu", n -> List.of(n.call("nn.leaky_relu", List.of(n.input(0)), "alpha", (double) n.attrFloat("alpha", 0.01f))));
        b.add("Clip", ElementwiseConverters::clip);
        variadic(b, "Max", "maximum");
        variadic(b, "Min", "minimum");
        variadic(b, "Sum", "add");
        b.add("Mean", n -> {
            Expr sum = n.input(0);
            for (int i = 1; i < n.inputCount(); i++) sum = n.call("add", sum, n.input(i));
            return List.of(n.inputCount() == 1 ? sum : n.call("divide", sum, scalarLike(n, 0, n.inputCount())));
        });
    }

    private static void binary(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> {
            // Opset < 7 had explicit broadcast/axis attributes instead of numpy broadcasting.
            if (n.attrInt("broadcast", 0) != 0 || n.hasAttr("axis")) {
                throw n.unsupported("legacy broadcast/axis attributes (opset < 7) are not supported");
            }
            n.ignore("consumed_inputs"); // opset 1 memory-planning hint
            return List.of(n.call(relay, n.input(0), n.input(1)));
        });
    }

    private static void unary(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> {
            n.ignore("consumed_inputs");
            return List.of(n.call(relay, n.input(0)));
        });
    }

    private static void variadic(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> {
            n.ignore("consumed_inputs");
            Expr acc = n.input(0);
            for (int i = 1; i < n.inputCount(); i++) acc = n.call(relay, acc, n.input(i));
            return List.of(acc);
        });
    }

    /** A scalar constant of input {@code i}'s dtype. */
    static Expr scalarLike(OnnxNode n, int i, double value) {
        TensorType t = n.inputType(i);
        return OnnxNode.constant(NDArray.fromDoubles(t.dtype(), new int[0], new double[] {value}));
    }

    private static List<Expr> clip(OnnxNode n) {
        Expr x = n.input(0);
        if (n.opset() < 11) {
            n.ignore("consumed_inputs");
            double lo = n.attrFloat("min", Float.NEGATIVE_INFINITY);
            double hi = n.attrFloat("max", Float.POSITIVE_INFINITY);
            return List.of(n.call("clip", List.of(x), "a_min", lo, "a_max", hi));
        }
        // Opset 11+: bounds are optional inputs and may be computed, so clip with maximum/minimum.
        if (n.hasInput(1)) x = n.call("maximum", x, n.input(1));
        if (n.hasInput(2)) x = n.call("minimum", x, n.input(2));
        return List.of(x);
    }
}
