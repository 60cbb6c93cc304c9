package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The instructions the compiler does not emit yet (shapes, device copies, register kills, explicit storage), on hand-written bytecode: no kernels needed. */
class VirtualMachineTest {
    static VirtualMachine vm(List<NDArray> constants, VmFunction... functions) {
        return new VirtualMachine(new Executable(List.of(functions), constants, List.of(), List.of()), Optional.empty());
    }

    @Test
    void shapesReshapesCopiesAndExplicitStorage() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {1, 2, 3, 4, 5, 6});
        NDArray newShape = NDArray.fromLongs(DType.INT64, new int[] {2}, new long[] {3, 2});
        VmFunction main = new VmFunction("main", 1, 10, List.of(
                new Instruction.ShapeOf(0, 1),
                new Instruction.LoadConst(0, 2),
                new Instruction.ReshapeTensor(0, 2, 3),
                new Instruction.DeviceCopy(3, 0, 0, 4),
                new Instruction.KillRegister(0),
                new Instruction.LoadConsti(24, 5),
                new Instruction.AllocStorage(5, 64, DType.FLOAT32, 6),
                new Instruction.AllocTensorReg(6, 0, 1, DType.FLOAT32, 7),
                new Instruction.AllocTensor(6, 8, new long[] {4}, DType.FLOAT32, 8),
                new Instruction.AllocADT(0, List.of(1, 4, 7, 8), 9),
                new Instruction.Ret(9)));
        try (VirtualMachine vm = vm(List.of(newShape), main)) {
            VmObject.Adt out = (VmObject.Adt) vm.runMain(x);
            NDArray shape = ((VmObject.Tensor) out.fields().get(0)).toNDArray();
            assertEquals(DType.INT64, shape.dtype());
            assertArrayEquals(new long[] {2, 3}, shape.longData());
            NDArray copied = ((VmObject.Tensor) out.fields().get(1)).toNDArray();
            assertArrayEquals(new int[] {3, 2}, copied.shape());
            assertArrayEquals(x.floatData(), copied.floatData());
            assertArrayEquals(new int[] {2, 3}, ((VmObject.Tensor) out.fields().get(2)).shape());
            assertArrayEquals(new int[] {4}, ((VmObject.Tensor) out.fields().get(3)).shape());
        }
    }

    @Test
    void aTensorBeyondItsStorageAndABadReshapeAreFaultsNamingTheInstruction() {
        VmFunction tooBig = new VmFunction("main", 0, 3, List.of(
                new Instruction.LoadConsti(16, 0),
                new Instruction.AllocStorage(0, 64, DType.FLOAT32, 1),
                new Instruction.AllocTensor(1, 8, new long[] {4}, DType.FLOAT32, 2),
                new Instruction.Ret(2)));
        try (VirtualMachine vm = vm(List.of(), tooBig)) {
            VmException e = assertThrows(VmException.class, vm::runMain);
            assertTrue(e.getMessage().contains("function main at instruction 2") && e.getMessage().contains("16 bytes at offset 8 of storage of 16 bytes"), e.getMessage());
        }
        VmFunction reshape = new VmFunction("main", 1, 3, List.of(new Instruction.LoadConst(0, 1), new Instruction.ReshapeTensor(0, 1, 2), new Instruction.Ret(2)));
        try (VirtualMachine vm = vm(List.of(NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {5})), reshape)) {
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.zeros(DType.FLOAT32, 2, 3)));
            assertTrue(e.getMessage().contains("reshapes a tensor of shape [2, 3] to [5]"), e.getMessage());
        }
    }

    @Test
    void fatalStopsWithItsMessageAndOtherDevicesAreRefused() {
        try (VirtualMachine vm = vm(List.of(), new VmFunction("main", 0, 0, List.of(new Instruction.Fatal("nothing matched"))))) {
            assertEquals("nothing matched", assertThrows(VmException.class, vm::runMain).getMessage());
        }
        try (VirtualMachine vm = vm(List.of(), new VmFunction("main", 1, 2, List.of(new Instruction.DeviceCopy(0, 0, 1, 1), new Instruction.Ret(1))))) {
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.scalar(1f)));
            assertTrue(e.getMessage().contains("only the host (0) exists"), e.getMessage());
        }
    }

    @Test
    void ifComparesScalarsAndGotoJumpsRelatively() {
        // main(c) = if c == 1 { 10 } else { 20 }: the offsets are relative to the jumping instruction
        VmFunction main = new VmFunction("main", 1, 5, List.of(
                new Instruction.LoadConsti(1, 1),
                new Instruction.If(0, 1, 1, 4),
                new Instruction.LoadConsti(10, 2),
                new Instruction.Move(2, 4),
                new Instruction.Goto(3),
                new Instruction.LoadConsti(20, 3),
                new Instruction.Move(3, 4),
                new Instruction.Ret(4)));
        try (VirtualMachine vm = vm(List.of(), main)) {
            assertEquals(10, ((VmObject.Tensor) vm.runMain(NDArray.scalar(true))).toNDArray().getLong(0));
            assertEquals(20, ((VmObject.Tensor) vm.runMain(NDArray.scalar(false))).toNDArray().getLong(0));
            assertEquals(10, ((VmObject.Tensor) vm.runMain(NDArray.scalar(1))).toNDArray().getLong(0));
        }
    }

    @Test
    void aStorageInAReusedLargerBlockStillBoundsItsTensors() {
        // 128 bytes killed, then 16 asked for: the run may hold only 128 bytes, so the 16 must come from the 128-byte block
        // (FreeBlocks' best fit), and a tensor must still fit the 16 bytes asked for, not the block's 128
        VmFunction main = new VmFunction("main", 0, 5, List.of(
                new Instruction.LoadConsti(128, 0),
                new Instruction.AllocStorage(0, 64, DType.FLOAT32, 1),
                new Instruction.KillRegister(1),
                new Instruction.LoadConsti(16, 2),
                new Instruction.AllocStorage(2, 64, DType.FLOAT32, 3),
                new Instruction.AllocTensor(3, 8, new long[] {4}, DType.FLOAT32, 4),
                new Instruction.Ret(4)));
        Executable exe = new Executable(List.of(main), List.of(), List.of(), List.of());
        try (VirtualMachine vm = new VirtualMachine(exe, Optional.empty(), VmOptions.DEFAULT.withMaxRunBytes(128))) {
            VmException e = assertThrows(VmException.class, vm::runMain);
            assertTrue(e.getMessage().contains("16 bytes at offset 8 of storage of 16 bytes"), e.getMessage());
        }
    }

    @Test
    void aShapeReadFromARegisterFollowsEachRunsInput() {
        // the VM prepares static shapes once at load; a shape from a register must not be one of them
        VmFunction main = new VmFunction("main", 1, 6, List.of(
                new Instruction.ShapeOf(0, 1),
                new Instruction.LoadConsti(64, 2),
                new Instruction.AllocStorage(2, 64, DType.FLOAT32, 3),
                new Instruction.AllocTensorReg(3, 0, 1, DType.FLOAT32, 4),
                new Instruction.AllocADT(0, List.of(1, 4), 5),
                new Instruction.Ret(5)));
        try (VirtualMachine vm = vm(List.of(), main)) {
            VmObject.Adt first = (VmObject.Adt) vm.runMain(NDArray.zeros(DType.FLOAT32, 2, 3));
            VmObject.Adt second = (VmObject.Adt) vm.runMain(NDArray.zeros(DType.FLOAT32, 4));
            assertArrayEquals(new int[] {2, 3}, ((VmObject.Tensor) first.fields().get(1)).shape());
            assertArrayEquals(new long[] {2, 3}, ((VmObject.Tensor) first.fields().get(0)).toNDArray().longData());
            assertArrayEquals(new int[] {4}, ((VmObject.Tensor) second.fields().get(1)).shape());
            assertArrayEquals(new long[] {4}, ((VmObject.Tensor) second.fields().get(0)).toNDArray().longData());
        }
    }

    @Test
    void aStaticShapeBeyondIntLoadsAndFaultsWhenRun() {
        VmFunction main = new VmFunction("main", 0, 3, List.of(
                new Instruction.LoadConsti(16, 0),
                new Instruction.AllocStorage(0, 64, DType.FLOAT32, 1),
                new Instruction.AllocTensor(1, 0, new long[] {1L << 40}, DType.FLOAT32, 2),
                new Instruction.Ret(2)));
        try (VirtualMachine vm = vm(List.of(), main)) {
            VmException e = assertThrows(VmException.class, vm::runMain);
            assertTrue(e.getMessage().contains("at instruction 2") && e.getMessage().contains("do not fit an int"), e.getMessage());
        }
    }

    @Test
    void anAllocStorageReachedByAJumpReadsItsSizeFromTheRegister() {
        // the VM knows the size of an AllocStorage right after the LoadConsti of it; a jump over that LoadConsti
        // arrives with another size in the register, which must be the one used
        VmFunction main = new VmFunction("main", 1, 5, List.of(
                new Instruction.LoadConsti(1, 4),
                new Instruction.LoadConsti(8, 1),
                new Instruction.If(0, 4, 1, 2),
                new Instruction.LoadConsti(64, 1),
                new Instruction.AllocStorage(1, 64, DType.FLOAT32, 2),
                new Instruction.AllocTensor(2, 0, new long[] {4}, DType.FLOAT32, 3),
                new Instruction.Ret(3)));
        try (VirtualMachine vm = vm(List.of(), main)) {
            assertArrayEquals(new int[] {4}, ((VmObject.Tensor) vm.runMain(NDArray.scalar(true))).shape());
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.scalar(false)));
            assertTrue(e.getMessage().contains("16 bytes at offset 0 of storage of 8 bytes"), e.getMessage());
            assertArrayEquals(new int[] {4}, ((VmObject.Tensor) vm.runMain(NDArray.scalar(true))).shape());
        }
    }
}
