package dev.relayfarm.vm;

import static dev.relayfarm.vm.VmProgramsTest.random;
import static dev.relayfarm.vm.VmProgramsTest.sameAsInterpreter;
import static dev.relayfarm.vm.VmProgramsTest.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.UnsupportedKernelException;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Models with a dynamic dimension that is not a leading batch (an image width, a sequence length) compiled once for the
 * VM and run at many sizes against the interpreter: width kernels (kernel/lower/WidthKernels) and their shape
 * functions. The sizes cover every residue mod 8 at the sampled quotients (1, 2, 3) and at others (4, 6, 7, 12), and the
 * static nests below 8.
 */
class DynamicWidthTest {
    private static final int[] SIZES = {1, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 27, 36, 53, 62, 100};

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    private static VmProgram compile(IRModule m) {
        return VmCompiler.compile(m, CompileOptions.host(3));
    }

    /** Width kernels: those with a dynamic dimension beyond the leading one. */
    private static long widthKernels(VmProgram p) {
        return p.executable().kernels().stream().filter(k -> k.params().stream().anyMatch(t -> t.shape().lastIndexOf(TensorSpec.DYNAMIC) > 0)).count();
    }

    private static void runAll(IRModule m, VirtualMachine vm, int[] sizes, IntFunction<NDArray[]> inputs, IntFunction<int[]> shape) {
        for (int s : sizes) {
            VmObject got = sameAsInterpreter(m, vm, inputs.apply(s));
            assertArrayEquals(shape.apply(s), ((VmObject.Tensor) got).shape(), "size " + s);
        }
    }

    @Test
    void aConvolutionAndPoolingRunAtEveryWidth() {
        IRModule m = text("""
                def @main(%x: Tensor[(1, 3, 8, ?), float32], %w: Tensor[(16, 3, 3, 3), float32], %b: Tensor[(16), float32]) {
                  %0 = nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]), %b));
                  nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2])
                }
                """);
        VmProgram p = compile(m);
        assertTrue(widthKernels(p) >= 1, p.executable().kernels().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 16, 3, 3, 3), b = random(2, 16);
            runAll(m, vm, new int[] {2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 27, 36, 53, 62, 100},
                    s -> new NDArray[] {random(10 + s, 1, 3, 8, s), w, b}, s -> new int[] {1, 16, 4, s / 2});
        }
    }

    @Test
    void aWidthSeenBeforeRunsItsKernelsInOneQueue() {
        // shape functions are remembered by their inputs: a run at a width seen before knows every size and shape it reads,
        // so its kernel calls run in one native call (the result's); a new width runs its shape functions at once, and
        // every run matches the interpreter
        IRModule m = text("""
                def @main(%x: Tensor[(1, 4, 6, ?), float32], %w: Tensor[(8, 4, 3, 3), float32]) {
                  %0 = nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]));
                  nn.softmax(nn.max_pool2d(%0, pool_size=[1, 2], strides=[1, 2]), axis=3)
                }
                """);
        VmProgram p = compile(m);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            NDArray w = random(3, 8, 4, 3, 3);
            int[] widths = {20, 13, 20, 13, 37, 20};
            long[] runs = new long[widths.length];
            for (int i = 0; i < widths.length; i++) {
                long before = vm.queueRuns();
                sameAsInterpreter(m, vm, random(100 + i, 1, 4, 6, widths[i]), w);
                runs[i] = vm.queueRuns() - before;
            }
            assertEquals(1, runs[2], "width 20 again: " + java.util.Arrays.toString(runs));
            assertEquals(1, runs[3], "width 13 again: " + java.util.Arrays.toString(runs));
            assertEquals(1, runs[5], "width 20 after 37: " + java.util.Arrays.toString(runs));
        }
    }

    @Test
    void aStridedConvolutionChainHalvesTheWidthTwice() {
        // stride 2 in the width twice: every kernel's size is a quarter or half of the input's, exact per residue class
        IRModule m = text("""
                def @main(%x: Tensor[(1, 4, 6, ?), float32], %w: Tensor[(8, 4, 3, 3), float32], %w2: Tensor[(8, 8, 1, 3), float32]) {
                  %0 = nn.relu(nn.conv2d(%x, %w, strides=[1, 2], padding=[1, 1, 1, 1]));
                  %1 = nn.conv2d(%0, %w2, strides=[1, 2], padding=[0, 1, 0, 1]);
                  sigmoid(%1)
                }
                """);
        VmProgram p = compile(m);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 8, 4, 3, 3), w2 = random(2, 8, 8, 1, 3);
            runAll(m, vm, SIZES, s -> new NDArray[] {random(10 + s, 1, 4, 6, s), w, w2}, s -> new int[] {1, 8, 6, ((s + 1) / 2 + 1) / 2});
        }
    }

    @Test
    void aSequenceThroughDenseReshapeTransposeAndSoftmax() {
        // (1, L, 16): dense along the features, then heads split and moved before the sequence, softmax over the features
        IRModule m = text("""
                def @main(%x: Tensor[(1, ?, 16), float32], %w: Tensor[(16, 16), float32]) {
                  %0 = nn.matmul(%x, %w);
                  %1 = reshape(%0, newshape=[0, -1, 2, 8]);
                  %2 = transpose(%1, axes=[0, 2, 1, 3]);
                  nn.softmax(%2, axis=-1)
                }
                """);
        VmProgram p = compile(m);
        assertTrue(widthKernels(p) >= 1, p.executable().kernels().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 16, 16);
            runAll(m, vm, SIZES, s -> new NDArray[] {random(10 + s, 1, s, 16), w}, s -> new int[] {1, 2, s, 8});
        }
    }

    @Test
    void attentionScoresAreQuadraticInTheSequenceLength() {
        // (2, L, 8) x (2, 8, L) -> (2, L, L): a stride of L and a buffer of 2·L² elements, softmax along the last L
        IRModule m = text("""
                def @main(%q: Tensor[(2, ?, 8), float32], %k: Tensor[(2, 8, ?), float32], %v: Tensor[(2, ?, 8), float32]) {
                  %0 = nn.batch_matmul(%q, %k, transpose_a=False, transpose_b=False);
                  %1 = nn.softmax(multiply(%0, 0.35f), axis=2);
                  nn.batch_matmul(%1, %v, transpose_a=False, transpose_b=False)
                }
                """);
        VmProgram p = compile(m);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            // size 1 too: a softmax over rows of one (its maximum of the output's shape) lowers like any other size
            runAll(m, vm, SIZES, s -> new NDArray[] {random(10 + s, 2, s, 8), random(20 + s, 2, 8, s), random(30 + s, 2, s, 8)},
                    s -> new int[] {2, s, 8});
        }
    }

    @Test
    void aReductionOverTheWidthHasAStaticResult() {
        // the squeeze-excite pattern: a global pool over a dynamic width gives a static result, scaled back over the width
        IRModule m = text("""
                def @main(%x: Tensor[(1, 8, 1, ?), float32]) {
                  %0 = nn.global_avg_pool2d(%x);
                  multiply(%x, sigmoid(%0))
                }
                """);
        VmProgram p = compile(m);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            runAll(m, vm, SIZES, s -> new NDArray[] {random(10 + s, 1, 8, 1, s)}, s -> new int[] {1, 8, 1, s});
        }
    }

    @Test
    void aTupleParameterCarriesTheWidth() {
        // the split's halves reach the last group as one tuple parameter: its size is read from the tuple's first field
        IRModule m = text("""
                def @main(%x: Tensor[(1, 4, 2, ?), float32], %w: Tensor[(4, 2, 1, 3), float32]) {
                  %0 = split(%x, indices_or_sections=2, axis=1);
                  %1 = nn.conv2d(%0.0, %w, padding=[0, 1, 0, 1]);
                  %2 = nn.conv2d(%0.1, %w, padding=[0, 1, 0, 1]);
                  add(%1, %2)
                }
                """);
        try (VirtualMachine vm = compile(m).load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 4, 2, 1, 3);
            runAll(m, vm, new int[] {1, 5, 8, 13, 40}, s -> new NDArray[] {random(10 + s, 1, 4, 2, s), w}, s -> new int[] {1, 4, 2, s});
        }
    }

    @Test
    void sizeZeroRunsOverEmptyTensors() {
        // a Loop's first step concatenates onto an empty tensor (ONNX Range, expanded); an elementwise group at size 0 has
        // an empty result; a sum over an empty width is 0, a product 1
        IRModule m = text("""
                def @main(%x: Tensor[(2, ?), float32], %y: Tensor[(2, 1), float32]) {
                  %0 = concatenate((exp(%x), %y), axis=1);
                  (%0, sum(%x, axis=[1]), sigmoid(%x), prod(%x, axis=[1]))
                }
                """);
        try (VirtualMachine vm = compile(m).load(CCompiler.host().orElseThrow())) {
            NDArray y = random(1, 2, 1);
            for (int s : new int[] {0, 1, 9, 0, 16}) {
                VmObject.Adt got = (VmObject.Adt) sameAsInterpreter(m, vm, random(10 + s, 2, s), y);
                assertArrayEquals(new int[] {2, s + 1}, ((VmObject.Tensor) got.fields().get(0)).shape(), "size " + s);
                assertArrayEquals(new int[] {2, s}, ((VmObject.Tensor) got.fields().get(2)).shape(), "size " + s);
            }
        }
        // ONNX NonZero: the transposed argwhere of all zeros is (2, 0); a mean over nothing stays uncovered, named
        IRModule nonZero = text("def @main(%x: Tensor[(3, 4), float32]) { transpose(argwhere(%x)) }\n");
        IRModule mean = text("def @main(%x: Tensor[(2, ?), float32]) { mean(%x, axis=[1]) }\n");
        try (VirtualMachine vm = compile(nonZero).load(CCompiler.host().orElseThrow());
             VirtualMachine means = compile(mean).load(CCompiler.host().orElseThrow())) {
            assertArrayEquals(new int[] {2, 0}, ((VmObject.Tensor) sameAsInterpreter(nonZero, vm, NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 3, 4))).shape());
            assertArrayEquals(new int[] {2, 12}, ((VmObject.Tensor) sameAsInterpreter(nonZero, vm, random(3, 3, 4))).shape());
            sameAsInterpreter(mean, means, random(4, 2, 5));
            VmException e = assertThrows(VmException.class, () -> means.runMain(random(5, 2, 0)));
            assertTrue(e.getMessage().contains("fused_mean") && e.getMessage().contains("not defined at that dynamic size"), e.getMessage());
        }
    }

    @Test
    void anExecutableWithWidthKernelsRoundTripsAsVersion3() {
        VmProgram p = compile(text("def @main(%x: Tensor[(2, ?), float32]) { exp(%x) }\n"));
        byte[] bytes = ExecutableFormat.toBytes(p.executable());
        assertEquals(3, java.nio.ByteBuffer.wrap(bytes, 4, 4).getInt());
        assertEquals(p.executable().kernels(), ExecutableFormat.fromBytes(bytes).kernels());
        KernelSignature k = p.executable().kernels().stream().filter(s -> s.params().stream().anyMatch(TensorSpec::isDynamic)).findFirst().orElseThrow();
        assertEquals(java.util.List.of(2, TensorSpec.DYNAMIC), k.params().getFirst().shape(), k.toString());
        assertEquals("size", k.params().get(k.numInputs() - 1).name(), k.toString());
    }

    @Test
    void aGroupWhoseSamplesDoNotMergeIsRefusedNamingIt() {
        // resizing a dynamic width to a fixed one: the scale (width / 8) is a float that is no count at widths 8t + 1
        IRModule m = text("def @main(%x: Tensor[(1, 3, 8, ?), float32]) { image.resize2d(%x, size=[8, 8]) }\n");
        UnsupportedKernelException e = assertThrows(UnsupportedKernelException.class, () -> compile(m));
        assertTrue(e.getMessage().contains("fused_image_resize2d") && e.getMessage().contains("1 mod 8") && e.getMessage().contains("float"), e.getMessage());
    }

    @Test
    void badSizesAreClearErrors() {
        // two inputs whose dynamic widths differ: one kernel size for both is checked before the call
        IRModule m = text("def @main(%x: Tensor[(2, ?), float32], %y: Tensor[(2, ?), float32]) { add(%x, %y) }\n");
        try (VirtualMachine vm = compile(m).load(CCompiler.host().orElseThrow())) {
            VmException e = assertThrows(VmException.class, () -> vm.runMain(random(1, 2, 12), random(2, 2, 13)));
            assertTrue(e.getMessage().contains("dynamic dimension 1") && e.getMessage().contains("size 12") && e.getMessage().contains("fused_"), e.getMessage());
        }
        // a 5-wide convolution without padding is not defined below width 5: the call stops, naming the kernel
        IRModule conv = text("""
                def @main(%x: Tensor[(1, 2, 5, ?), float32], %w: Tensor[(4, 2, 5, 5), float32]) {
                  nn.conv2d(%x, %w)
                }
                """);
        try (VirtualMachine vm = compile(conv).load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 4, 2, 5, 5);
            assertArrayEquals(new int[] {1, 4, 1, 2}, ((VmObject.Tensor) sameAsInterpreter(conv, vm, random(3, 1, 2, 5, 6), w)).shape());
            VmException e = assertThrows(VmException.class, () -> vm.runMain(random(2, 1, 2, 5, 4), w));
            assertTrue(e.getMessage().contains("conv2d") && e.getMessage().contains("not defined at that dynamic size"), e.getMessage());
            // a static dimension that differs (a height of 4 for 5): refused before the kernel reads past the buffer
            VmException h = assertThrows(VmException.class, () -> vm.runMain(random(4, 1, 2, 4, 12), w));
            assertTrue(h.getMessage().contains("whose dimension 2 must be 5"), h.getMessage());
        }
    }
}
