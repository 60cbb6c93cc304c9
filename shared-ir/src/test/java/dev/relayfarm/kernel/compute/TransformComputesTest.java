package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.ints;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Shape and data-movement operators through {@link OpComputes}, compiled and compared with the interpreter. */
class TransformComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    private static String fn1(String shape, String dtype, String call) {
        return "fn (%x: Tensor[" + shape + ", " + dtype + "]) { " + call + " }";
    }

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String t : List.of("float32", "int32", "bool", "int8", "float64")) {
            CASES.add(fn1("(2, 3, 4)", t, "reshape(%x, newshape=[4, -1])"));
            CASES.add(fn1("(2, 3, 4)", t, "transpose(%x, axes=[1, 2, 0])"));
            CASES.add(fn1("(2, 3, 4)", t, "concatenate((%x, %x, %x), axis=1)"));
        }
        CASES.add(fn1("(2, 3, 4)", "float32", "reshape(%x, newshape=[24])"));
        CASES.add(fn1("(2, 3, 4)", "float32", "reshape(%x, newshape=[0, -1])"));
        CASES.add("fn (%x: Tensor[(2, 3, 4), float32], %y: Tensor[(6, 4), float32]) { reshape_like(%x, %y) }");
        CASES.add(fn1("(2, 3, 4)", "float32", "transpose(%x)"));
        CASES.add(fn1("(2, 3, 4, 5)", "float32", "transpose(%x, axes=[0, 2, 3, 1])"));
        CASES.add(fn1("(1, 3, 1, 4)", "float32", "squeeze(%x)"));
        CASES.add(fn1("(1, 3, 1, 4)", "float32", "squeeze(%x, axis=[2])"));
        CASES.add(fn1("(3, 4)", "float32", "expand_dims(%x, axis=1, num_newaxis=2)"));
        CASES.add(fn1("(3, 4)", "int32", "expand_dims(%x, axis=-1)"));
        CASES.add(fn1("(2, 3, 4, 5)", "float32", "nn.batch_flatten(%x)"));
        CASES.add(fn1("(3, 5)", "float32", "copy(%x)"));
        CASES.add("fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32]) { concatenate((%a, %b), axis=-1) }");
        CASES.add("fn (%a: Tensor[(1, 3), int64], %b: Tensor[(4, 3), int64], %c: Tensor[(2, 3), int64]) { concatenate((%a, %b, %c)) }");
        CASES.add("fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32], %c: Tensor[(2, 3), float32]) { stack((%a, %b, %c), axis=1) }");
        CASES.add("fn (%a: Tensor[(2, 3), int32], %b: Tensor[(2, 3), int32]) { stack((%a, %b), axis=-1) }");
        CASES.add("fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32]) { stack((%a, %b)) }");
        CASES.add(fn1("(2, 9, 4)", "float32", "split(%x, indices_or_sections=3, axis=1)"));
        CASES.add(fn1("(2, 9, 4)", "int32", "split(%x, indices_or_sections=[2, 7], axis=1)"));
        CASES.add(fn1("(6, 4)", "float32", "split(%x, indices_or_sections=2)"));
        CASES.add(fn1("(8, 9)", "float32", "strided_slice(%x, begin=[1, 2], end=[7, 9], strides=[2, 3])"));
        CASES.add(fn1("(8, 9)", "float32", "strided_slice(%x, begin=[-1, 8], end=[0, 0], strides=[-2, -3])"));
        CASES.add(fn1("(8, 9, 3)", "int32", "strided_slice(%x, begin=[2], end=[-1])"));
        CASES.add(fn1("(8, 9)", "float32", "strided_slice(%x, begin=[1, 2], end=[3, -1], slice_mode=\"size\")"));
        CASES.add(fn1("(8, 9)", "float32", "strided_slice(%x, begin=[3], end=[7], axes=[1])"));
        for (String mode : List.of("clip", "wrap", "fast")) {
            OpKernelCases.Gen idx = mode.equals("fast") ? ints(0, 4) : ints(-8, 8);
            CASES.add("fn (%x: Tensor[(5, 6), float32], %i: Tensor[(3, 2), int32]) { take(%x, %i, axis=0, mode=\"" + mode + "\") }", null, idx);
            CASES.add("fn (%x: Tensor[(4, 5, 6), float32], %i: Tensor[(7), int64]) { take(%x, %i, axis=1, mode=\"" + mode + "\") }", null, idx);
            CASES.add("fn (%x: Tensor[(5, 6), float32], %i: Tensor[(3, 2), int32]) { take(%x, %i, mode=\"" + mode + "\") }", null, mode.equals("fast") ? ints(0, 29) : ints(-40, 40));
        }
        CASES.add("fn (%x: Tensor[(3, 5, 6), float32], %i: Tensor[(3, 4), int32]) { take(%x, %i, axis=1, batch_dims=1) }", null, ints(0, 4));
        CASES.add("fn (%x: Tensor[(4, 5), float32], %i: Tensor[(4, 3), int32]) { gather(%x, %i, axis=1) }", null, ints(-5, 4));
        CASES.add("fn (%x: Tensor[(4, 5, 2), int32], %i: Tensor[(3, 5, 2), int64]) { gather(%x, %i, axis=0) }", null, ints(-4, 3));
        CASES.add("fn (%x: Tensor[(4, 5, 6), float32], %i: Tensor[(2, 3), int32]) { gather_nd(%x, %i) }", null, ints(0, 3));
        CASES.add("fn (%x: Tensor[(4, 5), float32], %i: Tensor[(2, 3, 7), int64]) { gather_nd(%x, %i) }", null, ints(-4, 3));
        // batch_dims: Y's first dims walk data's first dims in step (ONNX GatherND batch_dims)
        CASES.add("fn (%x: Tensor[(3, 4, 5, 2), float32], %i: Tensor[(2, 3, 6), int32]) { gather_nd(%x, %i, batch_dims=1) }", null, ints(-4, 3));
        CASES.add("fn (%x: Tensor[(2, 3, 4, 5), int32], %i: Tensor[(1, 2, 3, 2), int64]) { gather_nd(%x, %i, batch_dims=2) }", null, ints(0, 3));
        CASES.add(fn1("(3, 1)", "float32", "broadcast_to(%x, shape=[2, 3, 4])"));
        CASES.add(fn1("(3, 1)", "int8", "broadcast_to(%x, shape=[3, 5])"));
        CASES.add(fn1("(2, 3)", "float32", "tile(%x, reps=[2, 3])"));
        CASES.add(fn1("(2, 3)", "int32", "tile(%x, reps=[2, 1, 2])"));
        CASES.add(fn1("(2, 3, 4)", "float32", "tile(%x, reps=[3])"));
        CASES.add(fn1("(3, 4, 5)", "float32", "reverse(%x, axis=1)"));
        CASES.add(fn1("(3, 4, 5)", "bool", "reverse(%x, axis=-1)"));
        CASES.add(fn1("(1, 16, 5, 5)", "float32", "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\")"));
        CASES.add(fn1("(1, 2, 5, 5, 8)", "float32", "layout_transform(%x, src_layout=\"NCHW8c\", dst_layout=\"NCHW\")"));
        CASES.add(fn1("(1, 2, 5, 5, 8)", "float32", "layout_transform(%x, src_layout=\"NCHW8c\", dst_layout=\"NCHW4c\")"));
        CASES.add(fn1("(2, 3, 5, 5)", "float32", "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NHWC\")"));
        CASES.add(fn1("(16, 8, 3, 3)", "float32", "layout_transform(%x, src_layout=\"OIHW\", dst_layout=\"OIHW4i8o\")"));
        CASES.add("fn (%i: Tensor[(3, 4), int32], %on: Tensor[(), float32], %off: Tensor[(), float32]) { one_hot(%i, %on, %off, depth=5, axis=-1) }", ints(-1, 6));
        CASES.add("fn (%i: Tensor[(3, 4), int64], %on: Tensor[(), int32], %off: Tensor[(), int32]) { one_hot(%i, %on, %off, depth=4, axis=1, dtype=\"float32\") }", ints(0, 4));
        CASES.add(fn1("(3, 4, 5)", "float32", "shape_of(%x)"));
        CASES.add(fn1("(3, 4, 5)", "float32", "shape_of(%x, dtype=\"int64\")"));
        CASES.add("fn () { zeros(shape=[3, 4], dtype=\"float32\") }");
        CASES.add("fn () { ones(shape=[3, 4], dtype=\"int32\") }");
        CASES.add("fn () { ones(shape=[2], dtype=\"bool\") }");
        CASES.add("fn (%v: Tensor[(), float32]) { full(%v, shape=[2, 3], dtype=\"int32\") }", OpKernelCases.uniform(-9, 9));
        CASES.add("fn (%v: Tensor[(), float64]) { full(%v, shape=[2, 3]) }");
        CASES.add(fn1("(3, 4)", "float32", "zeros_like(%x)"));
        CASES.add(fn1("(3, 4)", "int8", "ones_like(%x)"));
        CASES.add("fn (%x: Tensor[(3, 4), int32], %v: Tensor[(), int32]) { full_like(%x, %v) }");
        CASES.add("fn (%x: Tensor[(2, 3, 4), float32], %v: Tensor[(), float32]) { nn.pad(%x, %v, pad_width=[[0, 0], [1, 2], [3, 1]]) }");
        CASES.add("fn (%x: Tensor[(2, 3, 4), int32], %v: Tensor[(), int32]) { nn.pad(%x, %v, pad_width=[[1, 0], [1, 2], [0, 1]]) }");
        CASES.add("fn (%x: Tensor[(2, 3, 4), float32], %v: Tensor[(), float32]) { nn.pad(%x, %v, pad_width=[[0, 0], [2, 2], [3, 1]], pad_mode=\"edge\") }");
        CASES.add("fn (%x: Tensor[(2, 3, 4), float32], %v: Tensor[(), float32]) { nn.pad(%x, %v, pad_width=[[0, 0], [2, 2], [3, 3]], pad_mode=\"reflect\") }");
        CASES.add("fn (%x: Tensor[(2, 3, 4), float32], %v: Tensor[(), float32]) { nn.pad(%x, %v, pad_width=[[0, 0], [4, 2], [3, 5]], pad_mode=\"wrap\") }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(7);
        assertTrue(CASES.size() >= 78, "cases: " + CASES.size());
    }
}
