package dev.relayfarm.ad;

import java.util.List;

final class NnGradientCases {
    private NnGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("nn.dense", """
                        def @main(%x: Tensor[(2, 4), float64], %w: Tensor[(3, 4), float64]) { nn.dense(%x, %w) }
                        """),
                GradientCase.of("nn.bias_add", """
                        def @main(%x: Tensor[(2, 3, 2, 2), float64], %b: Tensor[(3), float64]) { nn.bias_add(%x, %b) }
                        """),
                GradientCase.of("nn.relu", """
                        def @main(%x: Tensor[(2, 3), float64]) { nn.relu(%x) }
                        """));
    }
}
