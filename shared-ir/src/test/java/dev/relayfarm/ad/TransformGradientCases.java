package dev.relayfarm.ad;

import java.util.List;

final class TransformGradientCases {
    private TransformGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("reshape", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { reshape(%a, newshape=[4, -1]) }
                        """));
    }
}
