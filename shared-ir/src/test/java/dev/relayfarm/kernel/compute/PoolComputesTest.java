package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.AttrValue;
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
 * Pooling in blocked and permuted layouts through {@link OpComputes} (NCHW cases are in
 * {@link NnComputesTest}), compiled into one module and compared with the interpreter.
 */
class PoolComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        String[] pools = {
            "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", "pool_size=[2, 2], strides=[2, 2]",
            "pool_size=[3, 3], padding=[1, 1, 2, 2], ceil_mode=True, strides=[2, 2]", "pool_size=[2, 3], dilation=[2, 1], strides=[1, 2]"};
        String[][] layouts = {
            {"(2, 2, 9, 10, 4)", "NCHW4c", ""}, {"(2, 9, 10, 8)", "NHWC", ""}, {"(2, 1, 9, 10, 8)", "NCHW8c", "NCHW4c"},
            {"(2, 8, 9, 10)", "NCHW", "NCHW4c"}, {"(2, 2, 9, 10, 4)", "NCHW4c", "NHWC"}, {"(1, 9, 2, 10, 4)", "NHCW4c", ""}};
        for (String attrs : pools) {
            for (String[] l : layouts) {
                String la = "layout=\"" + l[1] + "\"" + (l[2].isEmpty() ? "" : ", out_layout=\"" + l[2] + "\"");
                CASES.add("fn (%x: Tensor[" + l[0] + ", float32]) { nn.max_pool2d(%x, " + attrs + ", " + la + ") }");
                CASES.add("fn (%x: Tensor[" + l[0] + ", float32]) { nn.avg_pool2d(%x, " + attrs + ", " + la + ") }");
            }
        }
        CASES.add("fn (%x: Tensor[(2, 2, 9, 10, 4), float32]) { nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1], count_include_pad=True, layout=\"NCHW4c\") }");
        CASES.add("fn (%x: Tensor[(2, 2, 9, 10, 4), int32]) { nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1], layout=\"NCHW4c\") }");
        for (String[] l : layouts) {
            String la = "layout=\"" + l[1] + "\"" + (l[2].isEmpty() ? "" : ", out_layout=\"" + l[2] + "\"");
            CASES.add("fn (%x: Tensor[" + l[0] + ", float32]) { nn.global_avg_pool2d(%x, " + la + ") }");
            CASES.add("fn (%x: Tensor[" + l[0] + ", float32]) { nn.global_max_pool2d(%x, " + la + ") }");
        }
        CASES.add("fn (%x: Tensor[(1, 2, 5, 7, 8), int8]) { nn.global_max_pool2d(%x, layout=\"NCHW8c\") }");
        CASES.add("fn (%x: Tensor[(1, 2, 5, 7, 8), float64]) { nn.global_avg_pool2d(%x, layout=\"NCHW8c\") }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(11);
        assertEquals(64, CASES.size());
    }

    @Test
    void unsupportedCombinationsNameTheOperator() {
        var x = Te.placeholder("x", List.of(1, 2, 4, 4, 8), DType.INT32);
        Attrs attrs = Attrs.of("pool_size", AttrValue.ints(2, 2)).with("layout", AttrValue.of("NCHW8c"));
        var e = assertThrows(UnsupportedOperationException.class,
                () -> OpComputes.compute("nn.avg_pool2d", List.of(x), attrs, TensorType.of(DType.INT32, 1, 2, 3, 3, 8)));
        assertEquals("nn.avg_pool2d: average pooling needs a float tensor, got int32", e.getMessage());
    }
}
