package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.te.Te;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * conv2d in permuted layouts and conv2d_transpose through {@link OpComputes}, compiled into one
 * module and compared with the interpreter (NCHW conv2d cases are in {@link NnComputesTest}). Float
 * inputs in [0, 1): accumulation order differences stay relative.
 */
class ConvComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    private static final OpKernelCases.Gen POS = uniform(0, 1);

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        String[] geo = {"padding=[1, 1]", "strides=[2, 2], padding=[1, 0, 2, 1]", "padding=[2, 2], dilation=[2, 2]"};
        for (String g : geo) {
            CASES.add("fn (%x: Tensor[(2, 9, 10, 4), float32], %w: Tensor[(3, 3, 4, 6), float32]) { nn.conv2d(%x, %w, " + g
                    + ", data_layout=\"NHWC\", kernel_layout=\"HWIO\") }", POS, POS);
            CASES.add("fn (%x: Tensor[(2, 9, 10, 4), float32], %w: Tensor[(3, 3, 2, 6), float32]) { nn.conv2d(%x, %w, groups=2, " + g
                    + ", data_layout=\"NHWC\", kernel_layout=\"HWIO\") }", POS, POS);
            CASES.add("fn (%x: Tensor[(1, 9, 10, 4), float32], %w: Tensor[(3, 3, 4, 1), float32]) { nn.conv2d(%x, %w, groups=4, " + g
                    + ", data_layout=\"NHWC\", kernel_layout=\"HWOI\") }", POS, POS);
            CASES.add("fn (%x: Tensor[(2, 4, 9, 10), float32], %w: Tensor[(6, 3, 3, 4), float32]) { nn.conv2d(%x, %w, " + g
                    + ", kernel_layout=\"OHWI\", out_layout=\"NHWC\") }", POS, POS);
        }
        CASES.add("fn (%x: Tensor[(1, 6, 6, 3), int32], %w: Tensor[(3, 3, 3, 2), int32]) { nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\") }");
        CASES.add("fn (%x: Tensor[(1, 6, 6, 3), float64], %w: Tensor[(3, 3, 3, 2), float64]) { nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"HWIO\") }");
        CASES.add("fn (%x: Tensor[(1, 3, 6, 6), int8], %w: Tensor[(2, 3, 3, 3), int8]) { nn.conv2d(%x, %w, out_dtype=\"int32\") }");
        String[] tgeo = {
            "", "strides=[2, 2]", "strides=[2, 2], padding=[1, 1]", "strides=[2, 3], padding=[1, 0, 2, 1], output_padding=[1, 2]",
            "strides=[2, 2], dilation=[2, 1], padding=[1, 1]", "strides=[3, 3], padding=[2, 2], output_padding=[2, 1]"};
        for (String g : tgeo) {
            String sep = g.isEmpty() ? "" : ", ";
            CASES.add("fn (%x: Tensor[(2, 4, 5, 6), float32], %w: Tensor[(4, 3, 3, 3), float32]) { nn.conv2d_transpose(%x, %w" + sep + g + ") }", POS, POS);
            CASES.add("fn (%x: Tensor[(2, 4, 5, 6), float32], %w: Tensor[(4, 3, 3, 2), float32]) { nn.conv2d_transpose(%x, %w, groups=2" + sep + g + ") }", POS, POS);
            CASES.add("fn (%x: Tensor[(1, 5, 6, 4), float32], %w: Tensor[(3, 3, 4, 3), float32]) { nn.conv2d_transpose(%x, %w, data_layout=\"NHWC\", kernel_layout=\"HWIO\""
                    + sep + g + ") }", POS, POS);
        }
        CASES.add("fn (%x: Tensor[(1, 4, 5, 6), float32], %w: Tensor[(4, 1, 3, 3), float32]) { nn.conv2d_transpose(%x, %w, groups=4, strides=[2, 2], padding=[1, 1]) }", POS, POS);
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), int32], %w: Tensor[(2, 3, 2, 2), int32]) { nn.conv2d_transpose(%x, %w, strides=[2, 2]) }");
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), float64], %w: Tensor[(2, 3, 3, 3), float64]) { nn.conv2d_transpose(%x, %w, strides=[2, 2], padding=[1, 1], output_padding=[1, 1]) }");
        String[] t3 = {"", "strides=[2, 1, 2], padding=[1, 0, 1, 0, 1, 1], output_padding=[1, 0, 1]", "strides=[1, 2, 2], dilation=[2, 1, 1], padding=[1]"};
        for (String g : t3) {
            String sep = g.isEmpty() ? "" : ", ";
            CASES.add("fn (%x: Tensor[(1, 4, 3, 4, 5), float32], %w: Tensor[(4, 3, 2, 3, 3), float32]) { nn.conv3d_transpose(%x, %w" + sep + g + ") }", POS, POS);
            CASES.add("fn (%x: Tensor[(1, 4, 3, 4, 5), float32], %w: Tensor[(4, 2, 2, 3, 3), float32]) { nn.conv3d_transpose(%x, %w, groups=2" + sep + g + ") }", POS, POS);
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(7);
        assertEquals(42, CASES.size());
    }

    @Test
    void boolConvolutionsAreRejectedByName() {
        var x = Te.placeholder("x", List.of(1, 1, 3, 3), DType.BOOL);
        var w = Te.placeholder("w", List.of(1, 1, 1, 1), DType.BOOL);
        var e = assertThrows(UnsupportedOperationException.class,
                () -> OpComputes.compute("nn.conv2d_transpose", List.of(x, w), Attrs.EMPTY, TensorType.of(DType.BOOL, 1, 1, 3, 3)));
        assertEquals("nn.conv2d_transpose: bool convolutions are not supported", e.getMessage());
    }
}
