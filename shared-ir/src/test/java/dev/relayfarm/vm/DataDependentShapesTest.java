package dev.relayfarm.vm;

import static dev.relayfarm.vm.VmProgramsTest.count;
import static dev.relayfarm.vm.VmProgramsTest.sameAsInterpreter;
import static dev.relayfarm.vm.VmProgramsTest.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Operators whose result shape depends on their inputs' values (arange, argwhere, unique, NMS) compiled for the VM
 * (kernel/lower/DataDependentKernels) and run against the interpreter on many inputs, including results that come out
 * empty, and results that feed row kernels downstream.
 */
class DataDependentShapesTest {
    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    private static VirtualMachine load(IRModule m) {
        return VmCompiler.compile(m, CompileOptions.host(3)).load(CCompiler.host().orElseThrow());
    }

    private static NDArray scalar(DType t, double v) {
        NDArray a = NDArray.zeros(t);
        a.setDouble(0, v);
        return a;
    }

    @Test
    void arangeIsSizedByItsBoundsAndFeedsARowKernel() {
        IRModule m = text("""
                def @main(%s: float32, %e: float32, %d: float32) {
                  cos(multiply(arange(%s, %e, %d, dtype="float32"), 0.5f))
                }
                """);
        VmProgram p = VmCompiler.compile(m, CompileOptions.host(3));
        // the length kernel sizes the result (no upper bound), and its shape serves the row kernel after it: no ShapeOf
        assertEquals(2, count(p.executable(), i -> i instanceof Instruction.AllocTensorReg), p.executable().toString());
        assertEquals(0, count(p.executable(), i -> i instanceof Instruction.ShapeOf), p.executable().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            // a NaN bound gives an empty result, as in the interpreter; so does a count far below zero
            double[][] bounds = {{0, 10, 1}, {1.5, 9.25, 0.75}, {10, -3, -2.5}, {0, 0, 1}, {5, 1, 1}, {-1, 30, 0.3}, {0, Double.NaN, 1}, {0, -3e9, 1}};
            for (double[] b : bounds) {
                VmObject got = sameAsInterpreter(m, vm, scalar(DType.FLOAT32, b[0]), scalar(DType.FLOAT32, b[1]), scalar(DType.FLOAT32, b[2]));
                double n = Math.ceil((b[1] - b[0]) / b[2]);
                assertEquals(n > 0 ? (int) n : 0, ((VmObject.Tensor) got).shape()[0], java.util.Arrays.toString(b));
            }
            VmException zeroStep = assertThrows(VmException.class, () -> vm.runMain(scalar(DType.FLOAT32, 0), scalar(DType.FLOAT32, 1), scalar(DType.FLOAT32, 0)));
            assertTrue(zeroStep.getMessage().contains("arange"), zeroStep.getMessage());
        }
    }

    @Test
    void integerArangeRoundsItsLengthUp() {
        IRModule m = text("""
                def @main(%s: int32, %e: int32, %d: int32) {
                  arange(%s, %e, %d, dtype="int32")
                }
                """);
        try (VirtualMachine vm = load(m)) {
            int[][] bounds = {{0, 10, 3}, {10, 6, -3}, {-7, 8, 5}, {3, 3, 1}, {-4, -20, -7}, {2, -2, 1}};
            for (int[] b : bounds) sameAsInterpreter(m, vm, scalar(DType.INT32, b[0]), scalar(DType.INT32, b[1]), scalar(DType.INT32, b[2]));
        }
    }

    @Test
    void argwhereFindsTheNonZeroCoordinatesAtAnyDensity() {
        IRModule m = text("""
                def @main(%x: Tensor[(4, 5, 6), float32]) {
                  add(cast(argwhere(%x), dtype="float32"), 1f)
                }
                """);
        try (VirtualMachine vm = load(m)) {
            for (double density : new double[] {0, 0.05, 0.5, 1}) {
                NDArray x = mask(new Random((long) (density * 100)), density, 4, 5, 6);
                VmObject got = sameAsInterpreter(m, vm, x);
                assertEquals(3, ((VmObject.Tensor) got).shape()[1]);
            }
        }
    }

    @Test
    void uniqueFlatAndAlongAnAxisSortedOrNot() {
        Random r = new Random(7);
        NDArray x = NDArray.zeros(DType.FLOAT32, 3, 8);
        for (int i = 0; i < 3; i++) for (int j = 0; j < 8; j++) x.setDouble(i * 8 + j, r.nextInt(4)); // columns repeat
        for (String attrs : new String[] {"sorted=True", "sorted=False", "sorted=True, axis=1", "sorted=False, axis=1", "sorted=True, axis=0", "sorted=True, axis=-1"}) {
            IRModule m = text("""
                    def @main(%x: Tensor[(3, 8), float32]) {
                      unique(%x, ATTRS)
                    }
                    """.replace("ATTRS", attrs));
            try (VirtualMachine vm = load(m)) {
                sameAsInterpreter(m, vm, x);
                NDArray same = NDArray.zeros(DType.FLOAT32, 3, 8);
                sameAsInterpreter(m, vm, same); // one unique value or slice
                // NaN equals NaN and sorts after every number (Java's Double.compare, the interpreter's order)
                NDArray nans = x.copy();
                for (int i : new int[] {1, 6, 9, 17, 22}) nans.setDouble(i, Double.NaN);
                sameBitsAsInterpreter(m, vm, nans);
            }
        }
    }

    @Test
    void nonMaxSuppressionMatchesTheInterpreterInBothBoxFormats() {
        for (int center : new int[] {0, 1}) {
            IRModule m = text("""
                    def @main(%boxes: Tensor[(2, 40, 4), float32], %scores: Tensor[(2, 3, 40), float32], %max: Tensor[(1), int64],
                              %iou: Tensor[(1), float32], %score: Tensor[(1), float32]) {
                      vision.onnx_non_max_suppression(%boxes, %scores, %max, %iou, %score, center_point_box=CENTER)
                    }
                    """.replace("CENTER", Integer.toString(center)));
            try (VirtualMachine vm = load(m)) {
                Random r = new Random(11 + center);
                for (int trial = 0; trial < 6; trial++) {
                    NDArray boxes = NDArray.zeros(DType.FLOAT32, 2, 40, 4), scores = NDArray.zeros(DType.FLOAT32, 2, 3, 40);
                    for (int i = 0; i < boxes.elementCount(); i++) boxes.setDouble(i, r.nextInt(20) / 2.0); // overlaps and ties
                    for (int i = 0; i < scores.elementCount(); i++) scores.setDouble(i, r.nextInt(10) / 10.0);
                    NDArray max = NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {new long[] {0, 1, 3, 100, 5, 40}[trial]});
                    NDArray iou = NDArray.zeros(DType.FLOAT32, 1), score = NDArray.zeros(DType.FLOAT32, 1);
                    iou.setDouble(0, 0.1 + 0.15 * trial);
                    score.setDouble(0, trial == 5 ? 2 : 0.25);
                    sameAsInterpreter(m, vm, boxes, scores, max, iou, score);
                }
            }
        }
    }

    @Test
    void aResultSizedAfterItsKernelFeedsRowKernelsAndItsStorageOutlivesItsViews() {
        IRModule m = text("""
                def @main(%x: Tensor[(50), float32], %y: Tensor[(50), float32]) {
                  %0 = unique(%x);
                  %1 = unique(%y);
                  (sigmoid(%0.0), %0.3, exp(%1.0))
                }
                """);
        VmProgram p = VmCompiler.compile(m, CompileOptions.host(3));
        assertTrue(count(p.executable(), i -> i instanceof Instruction.KillRegister) > 0, p.executable().toString());
        // the kernel writes through an upper-bound tensor and the view reads the same storage: the storage is the view's,
        // never killed before a read of a tensor placed on it
        for (VmFunction f : p.executable().functions()) noStorageKilledBeforeItsTensorsAreRead(f.code());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            Random r = new Random(3);
            for (int trial = 0; trial < 5; trial++) {
                NDArray x = NDArray.zeros(DType.FLOAT32, 50), y = NDArray.zeros(DType.FLOAT32, 50);
                for (int i = 0; i < 50; i++) {
                    x.setDouble(i, r.nextInt(5 + 10 * trial));
                    y.setDouble(i, r.nextInt(50));
                }
                sameAsInterpreter(m, vm, x, y);
            }
        }
    }

    private static void noStorageKilledBeforeItsTensorsAreRead(List<Instruction> code) {
        java.util.Map<Integer, Integer> storageOf = new java.util.HashMap<>();
        for (Instruction i : code) {
            if (i instanceof Instruction.AllocTensor a) storageOf.put(a.dst(), a.storage());
            if (i instanceof Instruction.AllocTensorReg a) storageOf.put(a.dst(), a.storage());
        }
        for (int k = 0; k < code.size(); k++) {
            if (!(code.get(k) instanceof Instruction.KillRegister kill)) continue;
            for (int later = k + 1; later < code.size(); later++) {
                List<Integer> reads = switch (code.get(later)) {
                    case Instruction.InvokePacked i -> i.args();
                    case Instruction.AllocADT i -> i.fields();
                    case Instruction.ShapeOf i -> List.of(i.tensor());
                    case Instruction.Ret i -> List.of(i.result());
                    case Instruction.Move i -> List.of(i.src());
                    default -> List.of();
                };
                for (int r : reads) {
                    assertTrue(!Integer.valueOf(kill.register()).equals(storageOf.get(r)),
                            "storage %" + kill.register() + " killed at " + k + " but tensor %" + r + " on it is read at " + later + ": " + code);
                }
            }
        }
    }

    /** A tuple of tensors from the VM and the interpreter, element by element, NaN equal to NaN (what VmValues cannot compare). */
    private static void sameBitsAsInterpreter(IRModule m, VirtualMachine vm, NDArray x) {
        VmObject.Adt got = (VmObject.Adt) vm.runMain(x);
        dev.relayfarm.interp.TupleValue want = (dev.relayfarm.interp.TupleValue) dev.relayfarm.interp.Interpreter.runMain(m, x);
        assertEquals(want.fields().size(), got.fields().size());
        for (int f = 0; f < got.fields().size(); f++) {
            NDArray g = ((VmObject.Tensor) got.fields().get(f)).toNDArray(), w = ((dev.relayfarm.interp.TensorValue) want.fields().get(f)).data();
            assertArrayEquals(w.shape(), g.shape(), "field " + f);
            for (int i = 0; i < g.elementCount(); i++) assertEquals(0, Double.compare(w.getDouble(i), g.getDouble(i)), "field " + f + " element " + i);
        }
    }

    private static NDArray mask(Random r, double density, int... shape) {
        NDArray x = NDArray.zeros(DType.FLOAT32, shape);
        for (int i = 0; i < x.elementCount(); i++) if (r.nextDouble() < density) x.setDouble(i, 1 + r.nextInt(3));
        return x;
    }

    @Test
    void theKernelSignaturesMarkTheArangeResultDynamic() {
        IRModule m = text("""
                def @main(%s: int64, %e: int64, %d: int64) {
                  arange(%s, %e, %d, dtype="int64")
                }
                """);
        VmProgram p = VmCompiler.compile(m, CompileOptions.host(3));
        var arange = p.executable().kernels().stream().filter(k -> k.params().stream().anyMatch(t -> t.isDynamic())).toList();
        assertEquals(1, arange.size(), p.executable().kernels().toString());
        assertArrayEquals(new int[] {-1}, arange.getFirst().outputs().getFirst().shapeArray());
    }
}
