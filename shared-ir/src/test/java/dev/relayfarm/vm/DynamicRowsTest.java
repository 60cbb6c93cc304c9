package dev.relayfarm.vm;

import static dev.relayfarm.vm.VmProgramsTest.count;
import static dev.relayfarm.vm.VmProgramsTest.random;
import static dev.relayfarm.vm.VmProgramsTest.sameAsInterpreter;
import static dev.relayfarm.vm.VmProgramsTest.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.UnsupportedKernelException;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Models with a dynamic batch ({@code Tensor[(?, ...)]}) compiled once for the VM and run at many batch sizes: row kernels
 * (kernel/lower/RowKernels) with their shape functions, against the interpreter at every size, across the 8-row blocks
 * and the one-row remainder.
 */
class DynamicRowsTest {
    private static final int[] BATCHES = {1, 3, 8, 9, 17, 64};

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    private static VmProgram compile(IRModule m, int level) {
        return VmCompiler.compile(m, CompileOptions.host(level));
    }

    @Test
    void aDenseClassifierRunsAtEveryBatch() {
        IRModule m = text("""
                def @main(%x: Tensor[(?, 16), float32], %w: Tensor[(8, 16), float32], %b: Tensor[(8), float32]) {
                  nn.softmax(nn.relu(nn.bias_add(nn.dense(%x, %w), %b)))
                }
                """);
        VmProgram p = compile(m, 3);
        // two row kernels (dense+bias+relu, softmax) with results of one kind: one shape read and one shape-function call
        // serve both (the softmax's rows are the dense's), and each result is allocated with their size and shape
        assertEquals(2, count(p.executable(), i -> i instanceof Instruction.AllocTensorReg), p.executable().toString());
        assertEquals(1, count(p.executable(), i -> i instanceof Instruction.ShapeOf), p.executable().toString());
        assertEquals(3, count(p.executable(), i -> i instanceof Instruction.InvokePacked), p.executable().toString());
        assertEquals(3, p.executable().kernels().size(), p.executable().kernels().toString());
        KernelSignature rows = p.executable().kernels().stream().filter(k -> k.params().stream().anyMatch(t -> t.isDynamic())).findFirst().orElseThrow();
        assertEquals(-1, rows.params().getFirst().shape().getFirst().intValue(), rows.toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 8, 16), b = random(2, 8);
            for (int n : BATCHES) {
                VmObject got = sameAsInterpreter(m, vm, random(10 + n, n, 16), w, b);
                assertArrayEquals(new int[] {n, 8}, ((VmObject.Tensor) got).shape(), "batch " + n);
            }
        }
    }

    @Test
    void aConvolutionNetworkRunsAtEveryBatchThroughTheBlockedLayout() {
        // -O3 turns the convolution into NCHW16c with layout transforms around it: each keeps the batch first
        IRModule m = text("""
                def @main(%x: Tensor[(?, 3, 12, 12), float32], %w: Tensor[(16, 3, 3, 3), float32], %w2: Tensor[(10, 16), float32]) {
                  %0 = nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]));
                  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
                  %2 = nn.batch_flatten(nn.global_avg_pool2d(%1));
                  nn.log_softmax(nn.dense(%2, %w2))
                }
                """);
        for (int level : new int[] {1, 3}) {
            VmProgram p = compile(m, level);
            if (level == 3) {
                assertTrue(p.executable().kernels().stream().anyMatch(k -> k.name().contains("conv2d_NCHWc")), "a dynamic batch keeps the blocked layout: "
                        + p.executable().kernels().stream().map(KernelSignature::name).toList());
            }
            try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
                NDArray w = random(3, 16, 3, 3, 3), w2 = random(4, 10, 16);
                for (int n : BATCHES) sameAsInterpreter(m, vm, random(20 + n, n, 3, 12, 12), w, w2);
            }
        }
    }

    @Test
    void repeatedBatchesAreReplayedFromAPlanAndANewBatchLeavesIt() {
        // a batch run twice is planned (RunMemory); the next batch asks for other sizes and must leave the plan cleanly
        IRModule m = text("""
                def @main(%x: Tensor[(?, 16), float32], %w: Tensor[(8, 16), float32], %b: Tensor[(8), float32], %w2: Tensor[(4, 8), float32]) {
                  %0 = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
                  nn.softmax(nn.dense(%0, %w2))
                }
                """);
        try (VirtualMachine vm = compile(m, 3).load(CCompiler.host().orElseThrow())) {
            NDArray w = random(1, 8, 16), b = random(2, 8), w2 = random(3, 4, 8);
            for (int n : new int[] {1, 1, 1, 2, 2, 2, 1, 9, 9, 9, 3}) sameAsInterpreter(m, vm, random(30 + n, n, 16), w, b, w2);
        }
    }

    @Test
    void rowsJoinedAlongAnotherAxisThroughATupleStayApart() {
        IRModule m = text("""
                def @main(%x: Tensor[(?, 4), float32], %y: Tensor[(?, 3), float32]) {
                  %0 = concatenate((exp(%x), %y), axis=1);
                  (nn.softmax(%0), strided_slice(%0, begin=[0, 2], end=[2147483647, 6]))
                }
                """);
        try (VirtualMachine vm = compile(m, 3).load(CCompiler.host().orElseThrow())) {
            for (int n : BATCHES) sameAsInterpreter(m, vm, random(40 + n, n, 4), random(50 + n, n, 3));
        }
    }

    @Test
    void tensorsOfDifferentBatchesInOneCallAreAnError() {
        IRModule m = text("""
                def @main(%x: Tensor[(?, 4), float32], %y: Tensor[(?, 4), float32]) { add(%x, %y) }
                """);
        try (VirtualMachine vm = compile(m, 3).load(CCompiler.host().orElseThrow())) {
            sameAsInterpreter(m, vm, random(1, 5, 4), random(2, 5, 4));
            VmException e = assertThrows(VmException.class, () -> vm.runMain(random(1, 5, 4), random(2, 3, 4)));
            assertTrue(e.getMessage().contains("rows") && e.getMessage().contains("dynamic batch"), e.getMessage());
            // a static dimension that is not the kernel's: the buffer's size is not checked for a dynamic parameter, its dims are
            VmException narrow = assertThrows(VmException.class, () -> vm.runMain(random(1, 5, 3), random(2, 5, 3)));
            assertTrue(narrow.getMessage().contains("whose dimension 1 must be 4"), narrow.getMessage());
        }
    }

    @Test
    void aGroupThatMixesRowsBecomesAWidthKernel() {
        // softmax over the batch axis (a row of the result depends on every row), the rows reversed, and rows joined along
        // themselves: not row kernels, so each is lowered as a width kernel over the row count (kernel/lower/WidthKernels)
        for (String body : new String[] {"nn.softmax(%x, axis=0)", "strided_slice(%x, begin=[-1], end=[-2147483648], strides=[-1])",
                "concatenate((%x, negative(%x)))"}) {
            IRModule m = text("def @main(%x: Tensor[(?, 4), float32]) { " + body + " }\n");
            VmProgram p = compile(m, 3);
            assertTrue(p.executable().kernels().stream().noneMatch(k -> k.params().stream().anyMatch(t -> t.isDynamic())
                    && k.params().get(k.numInputs() - 1).name().equals("rows")), body + ": not a row kernel " + p.executable().kernels());
            try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
                for (int n : BATCHES) sameAsInterpreter(m, vm, random(30 + n, n, 4));
            }
        }
        // two row counts in one width kernel: the VM names the inputs that disagree
        IRModule joined = text("def @main(%x: Tensor[(?, 4), float32], %y: Tensor[(?, 4), float32]) { concatenate((%x, %y)) }\n");
        try (VirtualMachine vm = compile(joined, 3).load(CCompiler.host().orElseThrow())) {
            sameAsInterpreter(joined, vm, random(1, 9, 4), random(2, 9, 4));
            VmException e = assertThrows(VmException.class, () -> vm.runMain(random(1, 9, 4), random(2, 5, 4)));
            assertTrue(e.getMessage().contains("fused_concatenate"), e.getMessage());
        }
    }
}
