package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

class FoldEmptyTensorsTest {
    private static final String PASS = "fold-empty";

    @Test
    void concatenateDropsEmptyFieldsAndAnEmptySliceBecomesAConstant() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = concatenate((zeros(shape=[2, 0], dtype="float32"), %x), axis=1);
                  (%0, strided_slice(%0, begin=[3], end=[3], strides=[1], axes=[1]))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = concatenate((%x,), axis=1);
                  (%0, meta[relay.Constant][0])
                }
                """ + MetaText.of(NDArray.zeros(DType.FLOAT32, 2, 0)));
        assertSameResults(PASS, before);
    }

    @Test
    void aReductionOfAnEmptyInputIsEvaluated() {
        // the parameter has no elements, so its uses are a constant and the sums its identity, 0
        String before = """
                def @main(%e: Tensor[(2, 0, 3), float32], %x: Tensor[(2, 3), float32]) {
                  add(%x, sum(exp(%e), axis=[1]))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%e: Tensor[(2, 0, 3), float32], %x: Tensor[(2, 3), float32]) {
                  add(%x, meta[relay.Constant][0])
                }
                """ + MetaText.of(NDArray.zeros(DType.FLOAT32, 2, 3)));
        assertSameResults(PASS, before);
    }

    @Test
    void leavesModulesWithoutEmptyTensorsAlone() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = concatenate((%x, %x), axis=1);
                  sum(%0, axis=[1])
                }
                """);
    }
}
