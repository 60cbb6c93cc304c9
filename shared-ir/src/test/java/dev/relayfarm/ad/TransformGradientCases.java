package dev.relayfarm.ad;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Base64;
import java.util.List;

final class TransformGradientCases {
    private TransformGradientCases() {}

    /**
     * A program whose integer inputs are metadata constants ({@code meta[relay.Constant][i]}), since only float64
     * tensors are parameters of a gradient check: {@code constants} alternate an int[] shape and a long[] of values.
     */
    static String withInts(String program, Object... constants) {
        // A first comment line, so that the case's name (the program's second line) is the definition.
        StringBuilder sb = new StringBuilder("// integer inputs: meta[relay.Constant]\n").append(program.strip()).append("\n#[metadata]\n{\"relay.Constant\": [");
        for (int i = 0; i < constants.length; i += 2) {
            int[] shape = (int[]) constants[i];
            NDArray a = NDArray.fromLongs(DType.INT64, shape, (long[]) constants[i + 1]);
            if (i > 0) sb.append(", ");
            sb.append("{\"dtype\": \"int64\", \"shape\": ").append(java.util.Arrays.toString(shape))
                    .append(", \"data\": \"").append(Base64.getEncoder().encodeToString(a.toBytes())).append("\"}");
        }
        return sb.append("]}\n").toString();
    }

    static int[] shape(int... dims) {
        return dims;
    }

    static long[] values(long... v) {
        return v;
    }

    static List<GradientCase> cases() {
        return List.of(
                GradientCase.of("reshape", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { reshape(%a, newshape=[4, -1]) }
                        """),
                GradientCase.of("squeeze", """
                        def @main(%a: Tensor[(2, 1, 3, 1), float64]) { squeeze(%a, axis=[1]) }
                        """),
                GradientCase.of("squeeze", """
                        def @main(%a: Tensor[(2, 1, 3, 1), float64]) { squeeze(%a) }
                        """),
                GradientCase.of("expand_dims", """
                        def @main(%a: Tensor[(2, 3), float64]) { expand_dims(%a, axis=1, num_newaxis=2) }
                        """),
                GradientCase.of("nn.batch_flatten", """
                        def @main(%a: Tensor[(2, 3, 2), float64]) { nn.batch_flatten(%a) }
                        """),
                GradientCase.of("reshape_like", """
                        def @main(%a: Tensor[(2, 6), float64], %b: Tensor[(3, 4), float64]) { reshape_like(%a, %b) }
                        """),
                GradientCase.of("transpose", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { transpose(%a) }
                        """),
                GradientCase.of("transpose", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { transpose(%a, axes=[1, 2, 0]) }
                        """),
                GradientCase.of("transpose", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { transpose(%a, axes=[-1, 0, 1]) }
                        """),
                GradientCase.of("reverse", """
                        def @main(%a: Tensor[(2, 3, 4), float64]) { reverse(%a, axis=-2) }
                        """),
                GradientCase.of("layout_transform", """
                        def @main(%a: Tensor[(1, 8, 2, 3), float64]) { layout_transform(%a, src_layout="NCHW", dst_layout="NCHW4c") }
                        """),
                GradientCase.of("layout_transform", """
                        def @main(%a: Tensor[(2, 3, 2, 4), float64]) { layout_transform(%a, src_layout="NCHW", dst_layout="NHWC") }
                        """),
                GradientCase.of("broadcast_to", """
                        def @main(%a: Tensor[(3, 1), float64]) { broadcast_to(%a, shape=[2, 3, 4]) }
                        """),
                GradientCase.of("tile", """
                        def @main(%a: Tensor[(2, 3), float64]) { tile(%a, reps=[2, 1, 2]) }
                        """),
                GradientCase.of("tile", """
                        def @main(%a: Tensor[(2, 3, 2), float64]) { tile(%a, reps=[3]) }
                        """),
                GradientCase.of("concatenate", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 1), float64]) { concatenate((%a, %b, %a), axis=1) }
                        """),
                GradientCase.of("concatenate", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(4, 3), float64]) { concatenate((%b, %a), axis=-2) }
                        """),
                GradientCase.of("stack", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 3), float64]) { stack((%a, %b, %a), axis=1) }
                        """),
                GradientCase.of("stack", """
                        def @main(%a: Tensor[(2, 3), float64], %b: Tensor[(2, 3), float64]) { stack((%a, %b), axis=-1) }
                        """),
                GradientCase.of("split", """
                        def @main(%a: Tensor[(2, 6), float64]) { split(%a, indices_or_sections=3, axis=1) }
                        """),
                GradientCase.of("split", """
                        def @main(%a: Tensor[(5, 2), float64]) { split(%a, indices_or_sections=[1, 3], axis=-2) }
                        """),
                GradientCase.of("strided_slice", """
                        def @main(%a: Tensor[(5, 6), float64]) { strided_slice(%a, begin=[1, 0], end=[4, 6]) }
                        """),
                GradientCase.of("strided_slice", """
                        def @main(%a: Tensor[(5, 7), float64]) { strided_slice(%a, begin=[0, -1], end=[5, 0], strides=[2, -3]) }
                        """),
                GradientCase.of("strided_slice", """
                        def @main(%a: Tensor[(3, 4, 5), float64]) { strided_slice(%a, begin=[-4, 1], end=[100, 5], strides=[1, 2], axes=[2, 0]) }
                        """),
                GradientCase.of("strided_slice", """
                        def @main(%a: Tensor[(3, 4), float64]) { strided_slice(%a, begin=[1, 1], end=[-1, 2], slice_mode="size") }
                        """),
                GradientCase.of("take", withInts("""
                        def @main(%a: Tensor[(3, 4), float64]) { take(%a, meta[relay.Constant][0], axis=1) }
                        """, shape(2, 3), values(0, 3, 9, -2, 1, 1))),
                GradientCase.of("take", withInts("""
                        def @main(%a: Tensor[(3, 4, 2), float64]) { take(%a, meta[relay.Constant][0], axis=1, mode="wrap") }
                        """, shape(5), values(-1, 5, 2, 2, 0))),
                GradientCase.of("take", withInts("""
                        def @main(%a: Tensor[(3, 4), float64]) { take(%a, meta[relay.Constant][0]) }
                        """, shape(2, 2), values(11, 0, 5, 5))),
                GradientCase.of("take", withInts("""
                        def @main(%a: Tensor[(2, 3, 4), float64]) { take(%a, meta[relay.Constant][0], axis=2, batch_dims=1, mode="fast") }
                        """, shape(2, 3), values(0, 3, 3, 1, 2, 0))),
                GradientCase.of("gather", withInts("""
                        def @main(%a: Tensor[(3, 4), float64]) { gather(%a, meta[relay.Constant][0], axis=1) }
                        """, shape(2, 5), values(0, 1, 1, -1, 3, 2, 2, 0, -4, 1))),
                GradientCase.of("gather_nd", withInts("""
                        def @main(%a: Tensor[(3, 4, 2), float64]) { gather_nd(%a, meta[relay.Constant][0]) }
                        """, shape(2, 3), values(0, 2, 0, 1, -1, 1))),
                GradientCase.of("gather_nd", withInts("""
                        def @main(%a: Tensor[(2, 3, 4), float64]) { gather_nd(%a, meta[relay.Constant][0], batch_dims=1) }
                        """, shape(1, 2, 3), values(0, 2, 2, 1, 0, 1))),
                GradientCase.of("scatter_elements", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(2, 3), float64]) { scatter_elements(%a, meta[relay.Constant][0], %u, axis=1) }
                        """, shape(2, 3), values(0, 3, 1, 2, -1, 0))),
                GradientCase.of("scatter_elements", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(2, 3), float64]) { scatter_elements(%a, meta[relay.Constant][0], %u, axis=0, reduction="add") }
                        """, shape(2, 3), values(0, 2, 1, 0, 2, 1))),
                // duplicate targets: only the last update written to a position survives, and only it gets an adjoint
                GradientCase.of("scatter_elements", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(2, 3), float64]) { scatter_elements(%a, meta[relay.Constant][0], %u, axis=0) }
                        """, shape(2, 3), values(1, 2, 0, 1, 2, 2))),
                GradientCase.of("scatter_nd", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(3, 4), float64]) { scatter_nd(%a, meta[relay.Constant][0], %u) }
                        """, shape(1, 3), values(1, 0, 1))),
                GradientCase.of("scatter_nd", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(2, 4), float64]) { scatter_nd(%a, meta[relay.Constant][0], %u) }
                        """, shape(1, 2), values(2, 0))),
                GradientCase.of("scatter_nd", withInts("""
                        def @main(%a: Tensor[(3, 4), float64], %u: Tensor[(3), float64]) { scatter_nd(%a, meta[relay.Constant][0], %u, mode="add") }
                        """, shape(2, 3), values(0, 1, 2, 3, 0, 1))),
                GradientCase.of("nn.pad", """
                        def @main(%a: Tensor[(2, 3), float64], %v: float64) { nn.pad(%a, %v, pad_width=[[1, 0], [2, 1]]) }
                        """),
                GradientCase.of("nn.pad", """
                        def @main(%a: Tensor[(2, 3), float64]) { nn.pad(%a, 0f64, pad_width=[[1, 2], [2, 1]], pad_mode="edge") }
                        """),
                GradientCase.of("nn.pad", """
                        def @main(%a: Tensor[(3, 4), float64]) { nn.pad(%a, 0f64, pad_width=[[2, 1], [1, 3]], pad_mode="reflect") }
                        """),
                GradientCase.of("nn.pad", """
                        def @main(%a: Tensor[(2, 3), float64]) { nn.pad(%a, 0f64, pad_width=[[3, 1], [0, 4]], pad_mode="wrap") }
                        """));
    }
}
