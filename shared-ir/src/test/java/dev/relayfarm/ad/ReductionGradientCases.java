package dev.relayfarm.ad;

import java.util.List;

final class ReductionGradientCases {
    private ReductionGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("sum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[1]) }
                        """),
                GradientCase.of("sum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[0, 2], keepdims=True) }
                        """),
                GradientCase.of("sum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[1], exclude=True) }
                        """),
                GradientCase.of("sum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { sum(%a, axis=[-1], keepdims=True, exclude=True) }
                        """),
                GradientCase.of("sum", """
                        def @main(%a: Tensor[(2, 3), float64]) { sum(%a) }
                        """),
                GradientCase.of("mean", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { mean(%a, axis=[-1]) }
                        """),
                GradientCase.of("mean", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { mean(%a, axis=[0], keepdims=True, exclude=True) }
                        """),
                GradientCase.of("mean", """
                        def @main(%a: Tensor[(2, 3), float64]) { mean(%a) }
                        """),
                GradientCase.of("max", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { max(%a, axis=[1]) }
                        """),
                GradientCase.of("max", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { max(%a, axis=[0, 2], keepdims=True) }
                        """),
                GradientCase.of("max", """
                        def @main(%a: Tensor[(2, 3), float64]) { max(%a) }
                        """),
                GradientCase.of("min", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { min(%a, axis=[-1], exclude=True) }
                        """),
                GradientCase.of("min", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { min(%a, axis=[2], keepdims=True) }
                        """),
                // Away from 0 (the rule divides by the input), with either sign.
                GradientCase.of("prod", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { prod(%a, axis=[1]) }
                        """).range(0.5, 1.5),
                GradientCase.of("prod", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { prod(%a, axis=[1], keepdims=True, exclude=True) }
                        """).range(-1.5, -0.5),
                // The mean as an independent input (its own adjoint), and as mean(%a) so the two chains combine.
                GradientCase.of("variance", """
                        def @main(%a: Tensor[(2, 3, 4), float64], %b: Tensor[(2, 1, 4), float64]) { variance(%a, %b, axis=[1]) }
                        """),
                GradientCase.of("variance", """
                        def @main(%a: Tensor[(2, 3, 4), float64], %b: Tensor[(1, 3, 1), float64]) { variance(%a, %b, axis=[0, 2], keepdims=True, unbiased=True) }
                        """),
                GradientCase.of("variance", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { variance(%a, mean(%a, axis=[1], keepdims=True, exclude=True), axis=[1], exclude=True) }
                        """),
                GradientCase.of("std", """
                        def @main(%a: Tensor[(2, 3, 4), float64], %b: Tensor[(2, 3, 1), float64]) { std(%a, %b, axis=[-1]) }
                        """),
                GradientCase.of("std", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { std(%a, mean(%a, axis=[0, 1], keepdims=True), axis=[0, 1], keepdims=True, unbiased=True) }
                        """),
                GradientCase.of("cumsum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { cumsum(%a, axis=1) }
                        """),
                GradientCase.of("cumsum", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { cumsum(%a, axis=-1, exclusive=True) }
                        """),
                GradientCase.of("cumsum", """
                        def @main(%a: Tensor[(2, 3), float64]) { cumsum(%a) }
                        """),
                // Away from 0, as for prod.
                GradientCase.of("cumprod", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { cumprod(%a, axis=0) }
                        """).range(0.5, 1.5),
                GradientCase.of("cumprod", """
                        def @main(%a: Tensor[(2, 3), float64]) { cumprod(%a, exclusive=True) }
                        """).range(-1.5, -0.5));
    }
}
