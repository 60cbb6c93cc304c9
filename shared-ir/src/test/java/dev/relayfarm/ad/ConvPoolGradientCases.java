package dev.relayfarm.ad;

import java.util.List;

final class ConvPoolGradientCases {
    private ConvPoolGradientCases() {}

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(2, 3, 5, 5), float64], %w: Tensor[(4, 3, 3, 3), float64]) { nn.conv2d(%x, %w) }
                        """),
                // 6 rows at stride 2 leave the last one unread (output_padding 1), 7 columns do not
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(1, 2, 6, 7), float64], %w: Tensor[(3, 2, 3, 3), float64]) { nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]) }
                        """),
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(1, 2, 7, 8), float64], %w: Tensor[(2, 2, 3, 2), float64]) { nn.conv2d(%x, %w, dilation=[2, 2], padding=[1, 2, 0, 1]) }
                        """),
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(1, 2, 10, 10), float64], %w: Tensor[(2, 2, 3, 3), float64]) { nn.conv2d(%x, %w, strides=[2, 3], dilation=[2, 2], padding=[1, 1]) }
                        """),
                // depthwise
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(2, 4, 5, 6), float64], %w: Tensor[(4, 1, 3, 3), float64]) { nn.conv2d(%x, %w, strides=[2, 1], padding=[1, 1], groups=4) }
                        """),
                GradientCase.of("nn.conv2d", """
                        def @main(%x: Tensor[(2, 4, 5, 5), float64], %w: Tensor[(6, 2, 3, 3), float64]) { nn.conv2d(%x, %w, padding=[1, 1], groups=2) }
                        """),
                GradientCase.of("nn.conv2d_transpose", """
                        def @main(%x: Tensor[(2, 3, 4, 4), float64], %w: Tensor[(3, 2, 3, 3), float64]) { nn.conv2d_transpose(%x, %w, padding=[1, 1]) }
                        """),
                GradientCase.of("nn.conv2d_transpose", """
                        def @main(%x: Tensor[(1, 2, 3, 4), float64], %w: Tensor[(2, 3, 3, 3), float64]) {
                          nn.conv2d_transpose(%x, %w, strides=[2, 2], padding=[1, 1], output_padding=[1, 0])
                        }
                        """),
                // output_padding 2 >= stride 1 (allowed by dilation 3): conv2d of the adjoint is one row too long
                GradientCase.of("nn.conv2d_transpose", """
                        def @main(%x: Tensor[(1, 4, 3, 3), float64], %w: Tensor[(4, 1, 2, 2), float64]) {
                          nn.conv2d_transpose(%x, %w, strides=[1, 2], dilation=[3, 1], groups=2, output_padding=[2, 1])
                        }
                        """),
                GradientCase.of("nn.max_pool2d", """
                        def @main(%x: Tensor[(2, 2, 4, 4), float64]) { nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]) }
                        """),
                // overlapping windows: an element that is the maximum of two windows gets both adjoints
                GradientCase.of("nn.max_pool2d", """
                        def @main(%x: Tensor[(1, 2, 5, 6), float64]) { nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]) }
                        """),
                GradientCase.of("nn.max_pool2d", """
                        def @main(%x: Tensor[(1, 2, 5, 5), float64]) { nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=True) }
                        """),
                GradientCase.of("nn.max_pool2d", """
                        def @main(%x: Tensor[(1, 1, 6, 7), float64]) { nn.max_pool2d(%x, pool_size=[2, 2], dilation=[2, 2], strides=[1, 2]) }
                        """),
                GradientCase.of("nn.avg_pool2d", """
                        def @main(%x: Tensor[(2, 2, 4, 4), float64]) { nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2]) }
                        """),
                GradientCase.of("nn.avg_pool2d", """
                        def @main(%x: Tensor[(1, 2, 5, 6), float64]) { nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1]) }
                        """),
                GradientCase.of("nn.avg_pool2d", """
                        def @main(%x: Tensor[(1, 2, 5, 6), float64]) { nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True) }
                        """),
                GradientCase.of("nn.avg_pool2d", """
                        def @main(%x: Tensor[(1, 2, 5, 5), float64]) {
                          nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 0, 0, 1], ceil_mode=True, count_include_pad=True)
                        }
                        """),
                GradientCase.of("nn.global_avg_pool2d", """
                        def @main(%x: Tensor[(2, 3, 4, 5), float64]) { nn.global_avg_pool2d(%x) }
                        """),
                GradientCase.of("nn.global_avg_pool2d", """
                        def @main(%x: Tensor[(2, 4, 5, 3), float64]) { nn.global_avg_pool2d(%x, layout="NHWC") }
                        """),
                GradientCase.of("nn.global_max_pool2d", """
                        def @main(%x: Tensor[(2, 3, 4, 5), float64]) { nn.global_max_pool2d(%x) }
                        """),
                GradientCase.of("nn.global_max_pool2d", """
                        def @main(%x: Tensor[(2, 4, 5, 3), float64]) { nn.global_max_pool2d(%x, layout="NHWC") }
                        """));
    }
}
