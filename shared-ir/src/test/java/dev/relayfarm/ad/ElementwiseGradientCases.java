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
                GradientCase.of("negative", """
                        def @main(%a: Tensor[(2, 3), float64]) { negative(%a) }
                        """),
                GradientCase.of("exp", """
                        def @main(%a: Tensor[(2, 3), float64]) { exp(%a) }
                        """),
                GradientCase.of("log", """
                        def @main(%a: Tensor[(2, 3), float64]) { log(%a) }
                        """).range(0.5, 2),
                GradientCase.of("tanh", """
                        def @main(%a: Tensor[(2, 3), float64]) { tanh(%a) }
                        """),
                GradientCase.of("sigmoid", """
                        def @main(%a: Tensor[(2, 3), float64]) { sigmoid(%a) }
                        """));
    }
}
