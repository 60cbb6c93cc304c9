package dev.relayfarm.ad;

import java.util.List;

final class NnGradientCases {
    private NnGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("nn.dense", """
                        def @main(%x: Tensor[(2, 4), float64], %w: Tensor[(3, 4), float64]) { nn.dense(%x, %w) }
                        """),
                GradientCase.of("nn.dense", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %w: Tensor[(5, 4), float64]) { nn.dense(%x, %w, units=5) }
                        """),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(2, 3, 4), float64], %b: Tensor[(4, 5), float64]) { nn.matmul(%a, %b) }
                        """),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(3, 4), float64], %b: Tensor[(5, 4), float64]) { nn.matmul(%a, %b, transpose_b=True) }
                        """),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(4, 3), float64], %b: Tensor[(4, 5), float64]) { nn.matmul(%a, %b, transpose_a=True) }
                        """),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(4, 3), float64], %b: Tensor[(5, 4), float64]) { nn.matmul(%a, %b, transpose_a=True, transpose_b=True) }
                        """),
                GradientCase.of("nn.matmul", """
                        def @main(%a: Tensor[(4), float64], %b: Tensor[(4, 2), float64]) { nn.matmul(%a, %b) }
                        """),
                GradientCase.of("nn.batch_matmul", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %y: Tensor[(2, 5, 4), float64]) { nn.batch_matmul(%x, %y) }
                        """),
                GradientCase.of("nn.batch_matmul", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %y: Tensor[(1, 4, 5), float64]) { nn.batch_matmul(%x, %y, transpose_b=False) }
                        """),
                GradientCase.of("nn.batch_matmul", """
                        def @main(%x: Tensor[(1, 4, 3), float64], %y: Tensor[(2, 5, 4), float64]) { nn.batch_matmul(%x, %y, transpose_a=True) }
                        """),
                GradientCase.of("nn.batch_matmul", """
                        def @main(%x: Tensor[(2, 4, 3), float64], %y: Tensor[(2, 4, 5), float64]) { nn.batch_matmul(%x, %y, transpose_a=True, transpose_b=False) }
                        """),
                GradientCase.of("nn.bias_add", """
                        def @main(%x: Tensor[(2, 3, 2, 2), float64], %b: Tensor[(3), float64]) { nn.bias_add(%x, %b) }
                        """),
                GradientCase.of("nn.bias_add", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %b: Tensor[(4), float64]) { nn.bias_add(%x, %b, axis=-1) }
                        """),
                GradientCase.of("nn.relu", """
                        def @main(%x: Tensor[(2, 3), float64]) { nn.relu(%x) }
                        """),
                GradientCase.of("nn.leaky_relu", """
                        def @main(%x: Tensor[(2, 3, 2), float64]) { nn.leaky_relu(%x, alpha=0.1) }
                        """),
                GradientCase.of("nn.leaky_relu", """
                        def @main(%x: Tensor[(4, 3), float64]) { nn.leaky_relu(%x) }
                        """),
                GradientCase.of("nn.prelu", """
                        def @main(%x: Tensor[(2, 3, 2), float64], %alpha: Tensor[(3), float64]) { nn.prelu(%x, %alpha) }
                        """),
                GradientCase.of("nn.prelu", """
                        def @main(%x: Tensor[(3, 2, 4), float64], %alpha: Tensor[(4), float64]) { nn.prelu(%x, %alpha, axis=-1) }
                        """),
                GradientCase.of("nn.softmax", """
                        def @main(%x: Tensor[(2, 3, 4), float64]) { nn.softmax(%x) }
                        """),
                GradientCase.of("nn.softmax", """
                        def @main(%x: Tensor[(2, 3, 4), float64]) { nn.softmax(%x, axis=1) }
                        """),
                GradientCase.of("nn.log_softmax", """
                        def @main(%x: Tensor[(2, 3, 4), float64]) { nn.log_softmax(%x) }
                        """),
                GradientCase.of("nn.log_softmax", """
                        def @main(%x: Tensor[(3, 4), float64]) { nn.log_softmax(%x, axis=0) }
                        """),
                GradientCase.of("nn.dropout", """
                        def @main(%x: Tensor[(2, 3), float64]) { nn.dropout(%x, rate=0.3) }
                        """),
                // Inputs in [0.5, 2) keep the variance positive.
                GradientCase.of("nn.batch_norm", """
                        def @main(%x: Tensor[(2, 3, 2), float64], %gamma: Tensor[(3), float64], %beta: Tensor[(3), float64], %mean: Tensor[(3), float64], %var: Tensor[(3), float64]) { nn.batch_norm(%x, %gamma, %beta, %mean, %var, epsilon=0.01) }
                        """).range(0.5, 2),
                GradientCase.of("nn.batch_norm", """
                        def @main(%x: Tensor[(2, 4), float64], %gamma: Tensor[(4), float64], %beta: Tensor[(4), float64], %mean: Tensor[(4), float64], %var: Tensor[(4), float64]) { nn.batch_norm(%x, %gamma, %beta, %mean, %var, axis=-1, center=False, scale=False) }
                        """).range(0.5, 2),
                GradientCase.of("nn.layer_norm", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %gamma: Tensor[(4), float64], %beta: Tensor[(4), float64]) { nn.layer_norm(%x, %gamma, %beta) }
                        """),
                GradientCase.of("nn.layer_norm", """
                        def @main(%x: Tensor[(2, 3, 4), float64], %gamma: Tensor[(3), float64], %beta: Tensor[(3), float64]) { nn.layer_norm(%x, %gamma, %beta, axis=1, epsilon=0.001, scale=False) }
                        """),
                GradientCase.of("nn.lrn", """
                        def @main(%x: Tensor[(2, 5, 2), float64]) { nn.lrn(%x, size=3, axis=1, bias=1, alpha=0.5, beta=0.75) }
                        """),
                GradientCase.of("nn.lrn", """
                        def @main(%x: Tensor[(2, 3, 6), float64]) { nn.lrn(%x, size=4, axis=-1, bias=2, alpha=0.8, beta=0.6) }
                        """));
    }
}
