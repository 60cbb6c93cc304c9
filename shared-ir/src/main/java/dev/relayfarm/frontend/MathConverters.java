package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.List;

/**
 * ONNX element-wise math beyond the basic arithmetic: Mod, Pow with mixed dtypes, CastLike, bitwise
 * and logical ops, NaN/Inf tests, half-to-even Round, inverse trigonometric and hyperbolic functions,
 * and the activation functions ONNX defines by formula (Elu, Selu, Gelu, HardSwish, Mish, ...), which
 * are composed from Relay element-wise ops exactly as their ONNX definitions read.
 */
final class MathConverters {
    private MathConverters() {}

    static void register(OnnxConverters.Builder b) {
        unary(b, "Tan", "tan");
        unary(b, "Asin", "asin");
        unary(b, "Acos", "acos");
        unary(b, "Atan", "atan");
        unary(b, "Sinh", "sinh");
        unary(b, "Cosh", "cosh");
        unary(b, "Asinh", "asinh");
        unary(b, "Acosh", "acosh");
        unary(b, "Atanh", "atanh");
        unary(b, "IsNaN", "isnan");
        unary(b, "BitwiseNot", "bitwise_not");
        binary(b, "Xor", "logical_xor");
        binary(b, "BitwiseAnd", "bitwise_and");
        binary(b, "BitwiseOr", "bitwise_or");
        binary(b, "BitwiseXor", "bitwise_xor");
        b.add("BitShift", n -> {
            String direction = n.attrString("direction", "");
            String op = switch (direction) {
                case "LEFT" -> "left_shift";
                case "RIGHT" -> "right_shift";
                default -> throw n.unsupported("attribute direction must be \"LEFT\" or \"RIGHT\", got \"" + direction + "\"");
            };
            return List.of(n.call(op, n.input(0), n.input(1)));
        });
        b.add("Mod", MathConverters::mod);
        b.add("Pow", MathConverters::pow);
        b.add("CastLike", n -> List.of(onnxCast(n, n.input(0), n.inputType(1).dtype())));
        b.add("IsInf", MathConverters::isInf);
        b.add("BitCast", n -> {
            DType to = OnnxDTypes.require((int) n.attrInt("to", 0), n.where() + ": attribute 'to'");
            DType from = n.inputType(0).dtype();
            // ONNX counts bool as 8 bits, as its storage here is one byte.
            if (from.storageBytes() != to.storageBytes()) {
                throw n.unsupported("BitCast from " + from + " to " + to + ": the bit widths differ");
            }
            if (from.isLowBit() && from.bits() < 8 || to.isLowBit() && to.bits() < 8) {
                throw n.unsupported("BitCast from " + from + " to " + to + ": 4- and 2-bit types are not supported");
            }
            return List.of(n.call("reinterpret", List.of(n.input(0)), "dtype", to.toString()));
        });
        b.add("Round", n -> List.of(roundHalfEven(n, n.input(0))));
        activation(b, "HardSigmoid", (n, x) -> {
            double alpha = n.attrFloat("alpha", 0.2f), beta = n.attrFloat("beta", 0.5f);
            n.ignore("consumed_inputs");
            return List.of(n.call("clip", List.of(add(n, mul(n, x, alpha), beta)), "a_min", 0.0, "a_max", 1.0));
        });
        activation(b, "HardSwish", (n, x) -> {
            // x * max(0, min(1, x / 6 + 0.5)), with ONNX's alpha = 1/6 and beta = 0.5.
            Expr gate = n.call("clip", List.of(add(n, mul(n, x, 1.0 / 6), 0.5)), "a_min", 0.0, "a_max", 1.0);
            return List.of(n.call("multiply", x, gate));
        });
        activation(b, "Elu", (n, x) -> {
            double alpha = n.attrFloat("alpha", 1f);
            n.ignore("consumed_inputs");
            Expr neg = mul(n, sub(n, n.call("exp", x), 1), alpha);
            return List.of(n.call("where", n.call("less", x, scalar(n, x, 0)), neg, x));
        });
        activation(b, "Selu", (n, x) -> {
            double alpha = n.attrFloat("alpha", 1.67326319217681884765625f);
            double gamma = n.attrFloat("gamma", 1.05070102214813232421875f);
            n.ignore("consumed_inputs");
            Expr neg = sub(n, mul(n, n.call("exp", x), alpha), alpha);
            return List.of(mul(n, n.call("where", n.call("less_equal", x, scalar(n, x, 0)), neg, x), gamma));
        });
        activation(b, "Celu", (n, x) -> {
            // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
            double alpha = n.attrFloat("alpha", 1f);
            Expr neg = mul(n, sub(n, n.call("exp", mul(n, x, 1.0 / alpha)), 1), alpha);
            return List.of(n.call("add", n.call("maximum", x, scalar(n, x, 0)), n.call("minimum", neg, scalar(n, x, 0))));
        });
        activation(b, "Softplus", (n, x) -> List.of(softplus(n, x)));
        activation(b, "Softsign", (n, x) -> {
            return List.of(n.call("divide", x, add(n, n.call("abs", x), 1)));
        });
        activation(b, "ThresholdedRelu", (n, x) -> {
            double alpha = n.attrFloat("alpha", 1f);
            return List.of(n.call("where", n.call("greater", x, scalar(n, x, alpha)), x, scalar(n, x, 0)));
        });
        activation(b, "Mish", (n, x) -> {
            return List.of(n.call("multiply", x, n.call("tanh", softplus(n, x))));
        });
        activation(b, "Gelu", MathConverters::gelu);
        activation(b, "Swish", (n, x) -> {
            double alpha = n.attrFloat("alpha", 1f);
            return List.of(n.call("multiply", x, n.call("sigmoid", alpha == 1 ? x : mul(n, x, alpha))));
        });
        b.add("SwiGLU", MathConverters::swiGlu);
        activation(b, "Shrink", (n, x) -> {
            double lambd = n.attrFloat("lambd", 0.5f), bias = n.attrFloat("bias", 0f);
            Expr above = n.call("where", n.call("greater", x, scalar(n, x, lambd)), sub(n, x, bias), scalar(n, x, 0));
            return List.of(n.call("where", n.call("less", x, scalar(n, x, -lambd)), add(n, x, bias), above));
        });
    }

    /**
     * An activation composed of several element-wise steps. On float16/bfloat16 it is computed in
     * float32 and rounded once at the end, as the ONNX reference does; rounding after every step
     * drifts by a few units in the last place.
     */
    /**
     * SwiGLU(a, b) = Swish(a, alpha) · b, ONNX's function body (the gate a and the value b come as
     * two inputs). Like {@link #activation}, float16/bfloat16 are computed in float32 and rounded once.
     */
    private static List<Expr> swiGlu(OnnxNode n) {
        DType dtype = n.inputType(0).dtype();
        boolean narrow = dtype.equals(DType.FLOAT16) || dtype.equals(DType.BFLOAT16);
        Expr gate = narrow ? cast(n, n.input(0), DType.FLOAT32) : n.input(0);
        Expr value = narrow ? cast(n, n.input(1), DType.FLOAT32) : n.input(1);
        double alpha = n.attrFloat("alpha", 1f);
        Expr swish = n.call("multiply", gate, n.call("sigmoid", alpha == 1 ? gate : mul(n, gate, alpha)));
        Expr y = n.call("multiply", swish, value);
        return List.of(narrow ? cast(n, y, dtype) : y);
    }

    private static void activation(OnnxConverters.Builder b, String onnx, java.util.function.BiFunction<OnnxNode, Expr, List<Expr>> body) {
        b.add(onnx, n -> {
            DType dtype = n.inputType(0).dtype();
            if (!dtype.equals(DType.FLOAT16) && !dtype.equals(DType.BFLOAT16)) return body.apply(n, n.input(0));
            return List.of(cast(n, body.apply(n, cast(n, n.input(0), DType.FLOAT32)).getFirst(), dtype));
        });
    }

    private static void unary(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> List.of(n.call(relay, n.input(0))));
    }

    private static void binary(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> {
            if (n.attrInt("broadcast", 0) != 0 || n.hasAttr("axis")) {
                throw n.unsupported("legacy broadcast/axis attributes (opset < 7) are not supported");
            }
            return List.of(n.call(relay, n.input(0), n.input(1)));
        });
    }

    /** A scalar constant with the dtype of {@code like}. */
    static Expr scalar(OnnxNode n, Expr like, double value) {
        DType dtype = ((TensorType) n.typeOf(like)).dtype();
        return OnnxNode.constant(NDArray.fromDoubles(dtype, new int[0], new double[] {value}));
    }

    private static Expr add(OnnxNode n, Expr x, double c) {
        return n.call("add", x, scalar(n, x, c));
    }

    private static Expr sub(OnnxNode n, Expr x, double c) {
        return n.call("subtract", x, scalar(n, x, c));
    }

    private static Expr mul(OnnxNode n, Expr x, double c) {
        return n.call("multiply", x, scalar(n, x, c));
    }

    /** log(exp(x) + 1), as ONNX defines Softplus (and Mish uses it). */
    private static Expr softplus(OnnxNode n, Expr x) {
        return n.call("log", add(n, n.call("exp", x), 1));
    }

    /**
     * Mod: with {@code fmod=0} the result takes the divisor's sign (Python's %, Relay floor_mod);
     * with {@code fmod=1} the dividend's (C fmod, Relay trunc_mod). ONNX requires fmod=1 for floats;
     * we accept fmod=0 on floats with numpy's meaning rather than reject it.
     */
    private static List<Expr> mod(OnnxNode n) {
        boolean fmod = n.attrInt("fmod", 0) != 0;
        return List.of(n.call(fmod ? "trunc_mod" : "floor_mod", n.input(0), n.input(1)));
    }

    /**
     * Pow: since opset 12 the exponent may have another dtype than the base; the result has the
     * base's. A float exponent on an integer base is evaluated in float64 and cast back (numpy
     * promotes the same way); otherwise the exponent is cast to the base's dtype.
     */
    private static List<Expr> pow(OnnxNode n) {
        if (n.attrInt("broadcast", 0) != 0 || n.hasAttr("axis")) {
            throw n.unsupported("legacy broadcast/axis attributes (opset < 7) are not supported");
        }
        Expr x = n.input(0), y = n.input(1);
        DType xt = n.inputType(0).dtype(), yt = n.inputType(1).dtype();
        if (xt.equals(yt)) return List.of(n.call("power", x, y));
        if (!xt.isFloat() && yt.isFloat()) {
            Expr wide = n.call("power", cast(n, x, DType.FLOAT64), cast(n, y, DType.FLOAT64));
            return List.of(cast(n, wide, xt));
        }
        return List.of(n.call("power", x, cast(n, y, xt)));
    }

    static Expr cast(OnnxNode n, Expr x, DType dtype) {
        return n.call("cast", List.of(x), "dtype", dtype.toString());
    }

    /**
     * ONNX Cast/CastLike to {@code to}: {@code saturate} (default 1) applies to 8-bit float targets,
     * {@code round_mode} (default "up") to float8e8m0 ones; on other targets ONNX ignores both, and so do we.
     */
    static Expr onnxCast(OnnxNode n, Expr x, DType to) {
        boolean saturate = n.attrInt("saturate", 1) != 0;
        String mode = n.attrString("round_mode", "up");
        List<Object> attrs = new java.util.ArrayList<>(List.of("dtype", to.toString()));
        if (saturate && to.isMiniFloat() && to.bits() == 8) attrs.addAll(List.of("saturate", true));
        if (to.code() == DType.Code.FLOAT8_E8M0FNU) {
            try {
                dev.relayfarm.ir.MiniFloats.RoundMode.parse(mode);
            } catch (IllegalArgumentException e) {
                throw n.unsupported("attribute 'round_mode': " + e.getMessage());
            }
            if (!mode.equals("up")) attrs.addAll(List.of("round_mode", mode));
        }
        return n.call("cast", List.of(x), attrs.toArray());
    }

    private static List<Expr> isInf(OnnxNode n) {
        Expr x = n.input(0);
        boolean pos = n.attrInt("detect_positive", 1) != 0, neg = n.attrInt("detect_negative", 1) != 0;
        if (pos && neg) return List.of(n.call("isinf", x));
        if (pos) return List.of(n.call("equal", x, scalar(n, x, Double.POSITIVE_INFINITY)));
        if (neg) return List.of(n.call("equal", x, scalar(n, x, Double.NEGATIVE_INFINITY)));
        return List.of(cast(n, n.call("zeros_like", x), DType.BOOL));
    }

    /**
     * ONNX Round rounds halves to the nearest even integer (numpy's rint); Relay's round goes away
     * from zero. With f = floor(x) and d = x - f, the result is f + 1 when d > 0.5 or when d = 0.5
     * and f is odd, else f. Infinities give d = NaN, so they stay f = x; NaN stays NaN.
     */
    static Expr roundHalfEven(OnnxNode n, Expr x) {
        Expr f = n.call("floor", x);
        Expr d = n.call("subtract", x, f);
        Expr odd = n.call("equal", n.call("floor_mod", f, scalar(n, x, 2)), scalar(n, x, 1));
        Expr up = n.call("logical_or", n.call("greater", d, scalar(n, x, 0.5)),
                n.call("logical_and", n.call("equal", d, scalar(n, x, 0.5)), odd));
        return n.call("where", up, add(n, f, 1), f);
    }

    /** Gelu: 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh" 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
    private static List<Expr> gelu(OnnxNode n, Expr x) {
        String approximate = n.attrString("approximate", "none");
        Expr inner = switch (approximate) {
            case "none" -> n.call("erf", mul(n, x, 1 / Math.sqrt(2)));
            case "tanh" -> n.call("tanh", mul(n, n.call("add", x, mul(n, n.call("multiply", x, n.call("multiply", x, x)), 0.044715)),
                    Math.sqrt(2 / Math.PI)));
            default -> throw n.unsupported("attribute approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
        };
        return List.of(n.call("multiply", mul(n, x, 0.5), add(n, inner, 1)));
    }
}
