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
                GradientCase.of("mean", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { mean(%a, axis=[-1]) }
                        """));
    }
}
