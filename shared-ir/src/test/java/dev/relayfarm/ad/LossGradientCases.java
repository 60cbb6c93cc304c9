package dev.relayfarm.ad;

import java.util.List;

/** The loss operators: probabilities and targets in (0.2, 1), where log is smooth; both inputs are differentiated. */
final class LossGradientCases {
    private LossGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("nn.cross_entropy", """
                        def @main(%p: Tensor[(3, 4), float64], %t: Tensor[(3, 4), float64]) { nn.cross_entropy(%p, %t) }
                        """).range(0.2, 1),
                GradientCase.of("nn.cross_entropy_with_logits", """
                        def @main(%p: Tensor[(3, 4), float64], %t: Tensor[(3, 4), float64]) { nn.cross_entropy_with_logits(%p, %t) }
                        """));
    }
}
