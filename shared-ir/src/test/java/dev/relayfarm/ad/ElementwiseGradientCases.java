package dev.relayfarm.ad;

import java.util.List;

final class ElementwiseGradientCases {
    private ElementwiseGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("add", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { add(%a, %b) }
                        """),
                GradientCase.of("subtract", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { subtract(%a, %b) }
                        """),
                GradientCase.of("multiply", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(1, 3), float64]) { multiply(%a, %b) }
                        """),
                GradientCase.of("divide", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { divide(%a, %b) }
                        """).range(0.5, 2),
                // A positive base: the derivative in the exponent is z ln x.
                GradientCase.of("power", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { power(%a, %b) }
                        """).range(0.5, 2),
                GradientCase.of("power", """
                        def @main(%a: Tensor[(1, 3), float64], %b: Tensor[(2, 1), float64]) { power(%a, %b) }
                        """).range(0.5, 2),
                // Distinct random operands: ties, where the choice of operand is arbitrary, have measure zero.
                GradientCase.of("maximum", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 1), float64]) { maximum(%a, %b) }
                        """),
                GradientCase.of("maximum", """
                        def @main(%a: Tensor[(3), float64], %b: Tensor[(2, 3), float64]) { maximum(%a, %b) }
                        """),
                GradientCase.of("minimum", """
                        def @main(%a: Tensor[(3), float64], %b: Tensor[(2, 3), float64]) { minimum(%a, %b) }
                        """),
                GradientCase.of("minimum", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(1, 3), float64]) { minimum(%a, %b) }
                        """),
                // x in [-3, 3), |y| in [1, 3): quotients of both signs, where floor and trunc differ; random points miss the jumps at x / y integer.
                GradientCase.of("floor_mod", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { floor_mod(multiply(%a, 3f64), add(%b, 2f64)) }
                        """),
                GradientCase.of("floor_mod", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { floor_mod(multiply(%a, 3f64), negative(add(%b, 2f64))) }
                        """),
                GradientCase.of("mod", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { mod(multiply(%a, 3f64), add(%b, 2f64)) }
                        """),
                GradientCase.of("mod", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { mod(multiply(%a, 3f64), negative(add(%b, 2f64))) }
                        """),
                GradientCase.of("trunc_mod", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64]) { trunc_mod(multiply(%a, 3f64), add(%b, 2f64)) }
                        """),
                GradientCase.of("trunc_mod", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(2, 3), float64]) { trunc_mod(multiply(%a, 3f64), negative(add(%b, 2f64))) }
                        """),
                GradientCase.of("negative", """
                        def @main(%a: Tensor[(2, 3), float64]) { negative(%a) }
                        """),
                GradientCase.of("exp", """
                        def @main(%a: Tensor[(2, 3), float64]) { exp(%a) }
                        """),
                GradientCase.of("log", """
                        def @main(%a: Tensor[(2, 3), float64]) { log(%a) }
                        """).range(0.5, 2),
                GradientCase.of("log2", """
                        def @main(%a: Tensor[(2, 3), float64]) { log2(%a) }
                        """).range(0.5, 2),
                GradientCase.of("log10", """
                        def @main(%a: Tensor[(2, 3), float64]) { log10(%a) }
                        """).range(0.5, 2),
                GradientCase.of("tanh", """
                        def @main(%a: Tensor[(2, 3), float64]) { tanh(%a) }
                        """),
                GradientCase.of("sigmoid", """
                        def @main(%a: Tensor[(2, 3), float64]) { sigmoid(%a) }
                        """),
                GradientCase.of("abs", """
                        def @main(%a: Tensor[(2, 3), float64]) { abs(%a) }
                        """),
                GradientCase.of("sqrt", """
                        def @main(%a: Tensor[(2, 3), float64]) { sqrt(%a) }
                        """).range(0.5, 2),
                GradientCase.of("rsqrt", """
                        def @main(%a: Tensor[(2, 3), float64]) { rsqrt(%a) }
                        """).range(0.5, 2),
                GradientCase.of("erf", """
                        def @main(%a: Tensor[(2, 3), float64]) { erf(%a) }
                        """).range(-2, 2),
                GradientCase.of("sinh", """
                        def @main(%a: Tensor[(2, 3), float64]) { sinh(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("cosh", """
                        def @main(%a: Tensor[(2, 3), float64]) { cosh(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("sin", """
                        def @main(%a: Tensor[(2, 3), float64]) { sin(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("cos", """
                        def @main(%a: Tensor[(2, 3), float64]) { cos(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("tan", """
                        def @main(%a: Tensor[(2, 3), float64]) { tan(%a) }
                        """),
                GradientCase.of("atan", """
                        def @main(%a: Tensor[(2, 3), float64]) { atan(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("asinh", """
                        def @main(%a: Tensor[(2, 3), float64]) { asinh(%a) }
                        """).range(-1.5, 1.5),
                GradientCase.of("asin", """
                        def @main(%a: Tensor[(2, 3), float64]) { asin(%a) }
                        """).range(-0.9, 0.9),
                GradientCase.of("acos", """
                        def @main(%a: Tensor[(2, 3), float64]) { acos(%a) }
                        """).range(-0.9, 0.9),
                GradientCase.of("atanh", """
                        def @main(%a: Tensor[(2, 3), float64]) { atanh(%a) }
                        """).range(-0.9, 0.9),
                GradientCase.of("acosh", """
                        def @main(%a: Tensor[(2, 3), float64]) { acosh(%a) }
                        """).range(1.1, 3),
                // Inputs on both sides of both bounds.
                GradientCase.of("clip", """
                        def @main(%a: Tensor[(2, 4), float64]) { clip(%a, a_min=-0.5f, a_max=0.3f) }
                        """),
                // Through float32 and back: tiny inputs, so that x +- h (about 1e-6) keeps float32's relative precision in the difference quotient.
                GradientCase.of("cast", """
                        def @main(%a: Tensor[(2, 3), float64]) { cast(multiply(cast(%a, dtype="float32"), 2f), dtype="float64") }
                        """).range(-1e-9, 1e-9),
                GradientCase.of("cast", """
                        def @main(%a: Tensor[(2, 3), float64]) { cast(%a, dtype="float64") }
                        """),
                // No adjoint flows through an integer cast: the result is piecewise constant in %b.
                GradientCase.of("cast", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 3), float64]) { multiply(%a, cast(cast(multiply(%b, 3f64), dtype="int32"), dtype="float64")) }
                        """),
                // The condition's input gets no adjoint (its finite difference is 0 too); the branches broadcast both ways.
                GradientCase.of("where", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(3), float64], %c: Tensor[(2, 1), float64]) { where(greater(%a, 0f64), %b, %c) }
                        """),
                GradientCase.of("where", """
                        def @main(%a: Tensor[(2, 1), float64], %b: Tensor[(1, 3), float64], %c: Tensor[(3), float64]) { where(less(%a, 0f64), %b, %c) }
                        """),
                GradientCase.of("copy", """
                        def @main(%a: Tensor[(2, 3), float64]) { copy(%a) }
                        """),
                GradientCase.of("full", """
                        def @main(%v: float64, %a: Tensor[(2, 3), float64]) { multiply(full(%v, shape=[2, 3]), %a) }
                        """),
                GradientCase.of("full_like", """
                        def @main(%v: float64, %a: Tensor[(2, 3), float64]) { multiply(full_like(%a, %v), %a) }
                        """),
                GradientCase.of("one_hot", withIntsOneHot()));
    }

    private static String withIntsOneHot() {
        return TransformGradientCases.withInts("""
                def @main(%on: float64, %off: float64, %w: Tensor[(3, 4), float64]) {
                  multiply(one_hot(meta[relay.Constant][0], %on, %off, depth=4, axis=-1, dtype="float64"), %w)
                }
                """, new int[] {3}, new long[] {2, 0, 3});
    }
}
