package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;
import static dev.relayfarm.ad.Grads.collapseTo;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.ClipAttrs;
import java.util.Arrays;
import java.util.List;

/** Gradients of the elementwise and broadcasting operators; a broadcast input gets its adjoint summed back to its shape. */
final class ElementwiseGradients {
    private ElementwiseGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        r.rule("add", (c, g) -> binary(c, g, g));
        r.rule("subtract", (c, g) -> binary(c, g, call("negative", g)));
        r.rule("multiply", (c, g) -> binary(c, call("multiply", g, c.arg(1)), call("multiply", g, c.arg(0))));
        r.rule("divide", (c, g) -> binary(c, call("divide", g, c.arg(1)),
                call("negative", call("divide", call("multiply", g, c.out()), c.arg(1)))));
        r.rule("power", ElementwiseGradients::power);
        // The adjoint goes to the operand that was picked; on a tie to the left one only, so the two parts still sum to g.
        r.rule("maximum", (c, g) -> select(c, g, call("greater_equal", c.arg(0), c.arg(1))));
        r.rule("minimum", (c, g) -> select(c, g, call("less_equal", c.arg(0), c.arg(1))));
        // x mod y = x - q(x / y) * y with a piecewise-constant quotient q (floor for floor_mod, trunc for the C-style
        // remainders, matching the kernels' formulas): d/dx = 1 and d/dy = -q away from the jumps.
        r.rule("floor_mod", (c, g) -> remainder(c, g, "floor"));
        r.rule("mod", (c, g) -> remainder(c, g, "trunc"));
        r.rule("trunc_mod", (c, g) -> remainder(c, g, "trunc"));

        r.rule("negative", (c, g) -> List.of(call("negative", g)));
        r.rule("exp", (c, g) -> List.of(call("multiply", g, c.out())));
        r.rule("log", (c, g) -> List.of(call("divide", g, c.arg(0))));
        r.rule("log2", (c, g) -> List.of(call("divide", g, call("multiply", c.arg(0), scalar(c, Math.log(2))))));
        r.rule("log10", (c, g) -> List.of(call("divide", g, call("multiply", c.arg(0), scalar(c, Math.log(10))))));
        r.rule("tanh", (c, g) -> List.of(call("multiply", g, oneMinusSquare(c, c.out()))));
        r.rule("sigmoid", (c, g) -> List.of(call("multiply", g,
                call("multiply", c.out(), call("subtract", scalar(c, 1), c.out())))));
        r.rule("abs", (c, g) -> List.of(call("multiply", g, call("sign", c.arg(0)))));
        // d sqrt(x) = 1 / (2 sqrt(x)) and d x^(-1/2) = -x^(-3/2) / 2: both from the result, with no second root.
        r.rule("sqrt", (c, g) -> List.of(call("divide", g, call("multiply", scalar(c, 2), c.out()))));
        r.rule("rsqrt", (c, g) -> List.of(call("multiply", g,
                call("multiply", scalar(c, -0.5), call("multiply", c.out(), call("multiply", c.out(), c.out()))))));
        r.rule("erf", (c, g) -> List.of(call("multiply", g,
                call("multiply", scalar(c, 2 / Math.sqrt(Math.PI)), call("exp", call("negative", square(c.arg(0))))))));
        r.rule("sinh", (c, g) -> List.of(call("multiply", g, call("cosh", c.arg(0)))));
        r.rule("cosh", (c, g) -> List.of(call("multiply", g, call("sinh", c.arg(0)))));
        r.rule("sin", (c, g) -> List.of(call("multiply", g, call("cos", c.arg(0)))));
        r.rule("cos", (c, g) -> List.of(call("negative", call("multiply", g, call("sin", c.arg(0))))));
        r.rule("tan", (c, g) -> List.of(call("multiply", g, call("add", scalar(c, 1), square(c.out())))));
        r.rule("asin", (c, g) -> List.of(call("multiply", g, call("rsqrt", oneMinusSquare(c, c.arg(0))))));
        r.rule("acos", (c, g) -> List.of(call("negative", call("multiply", g, call("rsqrt", oneMinusSquare(c, c.arg(0)))))));
        r.rule("atan", (c, g) -> List.of(call("divide", g, call("add", scalar(c, 1), square(c.arg(0))))));
        r.rule("asinh", (c, g) -> List.of(call("multiply", g, call("rsqrt", call("add", square(c.arg(0)), scalar(c, 1))))));
        r.rule("acosh", (c, g) -> List.of(call("multiply", g, call("rsqrt", call("subtract", square(c.arg(0)), scalar(c, 1))))));
        r.rule("atanh", (c, g) -> List.of(call("divide", g, oneMinusSquare(c, c.arg(0)))));

        r.rule("clip", ElementwiseGradients::clip);
        r.rule("cast", ElementwiseGradients::cast);
        r.rule("where", (c, g) -> {
            // The condition only selects; each branch gets the adjoint where it was selected, summed back to its shape.
            Expr zeros = call("zeros_like", g);
            TensorType out = c.outTensorType();
            return Arrays.asList(null,
                    collapseTo(call("where", c.arg(0), g, zeros), out, c.argType(1), c.op()),
                    collapseTo(call("where", c.arg(0), zeros, g), out, c.argType(2), c.op()));
        });
        r.rule("copy", (c, g) -> List.of(g));

        r.constant("equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "zeros_like", "ones_like");
        // arange's length depends on its inputs' values, so its result has a static type (all we differentiate) only when
        // they are constants: nothing flows back.
        r.constant("zeros", "ones", "shape_of", "arange");
        // Fills: constant in everything but the fill value, whose adjoint is the sum of the result's.
        r.rule("full", (c, g) -> List.of(fillValueAdjoint(c, g, 0)));
        r.rule("full_like", (c, g) -> java.util.Arrays.asList(null, fillValueAdjoint(c, g, 1)));
        // one_hot(indices, on, off): on gets the adjoint at the hot positions, off the rest.
        r.rule("one_hot", (c, g) -> {
            DType dt = c.outTensorType().dtype();
            Expr hot = call("one_hot", c.attrs(), c.arg(0), Grads.scalar(1, dt), Grads.scalar(0, dt));
            return java.util.Arrays.asList(null, fillValueAdjoint(c, call("multiply", g, hot), 1),
                    fillValueAdjoint(c, call("multiply", g, call("subtract", Grads.scalar(1, dt), hot)), 2));
        });
        r.constant("floor_divide", "trunc_divide", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                "bitwise_xor", "left_shift", "right_shift");
        r.constant("sign", "floor", "ceil", "round", "trunc", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not");
    }

    /** The sum of {@code g}, in the shape and dtype of the scalar argument {@code i} (a fill value, on/off value, start, step). */
    private static Expr fillValueAdjoint(GradientCall c, Expr g, int i) {
        TensorType value = c.argType(i);
        Expr sum = call("reshape", Grads.attrs("newshape", Grads.staticShape(value, c.op())), call("sum", g));
        return value.dtype().equals(c.outTensorType().dtype()) ? sum : call("cast", Grads.attrs("dtype", value.dtype().toString()), sum);
    }

    /** The adjoints of a broadcasting binary operator, each summed back to its input's shape. */
    static List<Expr> binary(GradientCall c, Expr dLhs, Expr dRhs) {
        TensorType out = c.outTensorType();
        return Arrays.asList(collapseTo(dLhs, out, c.argType(0), c.op()), collapseTo(dRhs, out, c.argType(1), c.op()));
    }

    /**
     * z = x^y: dz/dx = y x^(y-1) (written with power rather than z / x, so a zero base is no division by zero) and
     * dz/dy = z ln x, taken as 0 where x <= 0: at x = 0 z is 0 for every y > 0, and for x < 0 z is defined only at
     * integer y, so there is no derivative in y (and ln x would turn the whole adjoint into NaN).
     */
    private static List<Expr> power(GradientCall c, Expr g) {
        Expr x = c.arg(0), y = c.arg(1);
        Expr dx = call("multiply", g, call("multiply", y, call("power", x, call("subtract", y, scalar(c, 1)))));
        Expr logX = call("where", call("greater", x, scalar(c, 0)), call("log", x), call("zeros_like", x));
        Expr dy = call("multiply", g, call("multiply", c.out(), logX));
        return binary(c, dx, dy);
    }

    /** g routed to the left operand where {@code pickLeft} holds and to the right one elsewhere. */
    private static List<Expr> select(GradientCall c, Expr g, Expr pickLeft) {
        Expr zeros = call("zeros_like", g);
        return binary(c, call("where", pickLeft, g, zeros), call("where", pickLeft, zeros, g));
    }

    private static List<Expr> remainder(GradientCall c, Expr g, String quotient) {
        Expr q = call(quotient, call("divide", c.arg(0), c.arg(1)));
        return binary(c, g, call("negative", call("multiply", g, q)));
    }

    /** The adjoint passes strictly inside (a_min, a_max); outside the result is a constant bound. */
    private static List<Expr> clip(GradientCall c, Expr g) {
        // On integers the bounds would round into the input's dtype, and no adjoint of an integer tensor means anything.
        if (!c.argType(0).dtype().isFloat()) return Arrays.asList((Expr) null);
        ClipAttrs a = c.parsedAttrs();
        Expr x = c.arg(0);
        Expr inside = call("logical_and", call("greater", x, scalar(c, a.aMin())), call("less", x, scalar(c, a.aMax())));
        return List.of(call("where", inside, g, call("zeros_like", g)));
    }

    /**
     * The adjoint converted back to the input's dtype. A cast from or to a non-floating type is piecewise constant
     * (rounding to integers) or has an input with no adjoint to speak of, so it passes nothing back.
     */
    private static List<Expr> cast(GradientCall c, Expr g) {
        DType from = c.argType(0).dtype();
        if (!from.isFloat() || !c.outTensorType().dtype().isFloat()) return Arrays.asList((Expr) null);
        if (from.equals(c.outTensorType().dtype())) return List.of(g);
        return List.of(call("cast", Grads.attrs("dtype", from.toString()), g));
    }

    /** A rank-0 constant of the call's first argument's dtype. */
    private static Expr scalar(GradientCall c, double value) {
        return Grads.scalar(value, c.argType(0).dtype());
    }

    private static Expr square(Expr x) {
        return call("multiply", x, x);
    }

    private static Expr oneMinusSquare(GradientCall c, Expr x) {
        return call("subtract", scalar(c, 1), square(x));
    }
}
