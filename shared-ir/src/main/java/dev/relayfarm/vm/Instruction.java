package dev.relayfarm.vm;

import dev.relayfarm.ir.DType;
import java.util.Arrays;
import java.util.List;

/**
 * One VM instruction: the instruction set of the Relay VM (Nimble, the Relay dissertation's chapter 5;
 * TVM's {@code vm/bytecode.h}). Register-based: every operand and result is a register index of the
 * current frame, and a register is written once per activation except where a {@link Move} joins the
 * branches of an {@code if} or a {@code match}. Jump offsets ({@link If}, {@link Goto}) are relative to
 * the jumping instruction, so a function's code can be moved or concatenated without relocation.
 *
 * <p>Run-time values (see {@link VmObject}): tensors, storage blocks, ADT values (tuples are ADT values
 * of tag 0) and closures. Scalars that the VM itself compares (tags, conditions, {@link LoadConsti}) are
 * rank-0 tensors, so a kernel's boolean result is an {@code if} condition without conversion.
 */
public sealed interface Instruction {
    /** {@code dst = src}; joins the results of branches into one register. */
    record Move(int src, int dst) implements Instruction {}

    /** Returns register {@code result} to the caller (or, from the entry function, to the VM's user). */
    record Ret(int result) implements Instruction {}

    /** Calls VM function {@code function} (an index into {@link Executable#functions()}) with {@code args}; its result goes to {@code dst}. */
    record Invoke(int function, List<Integer> args, int dst) implements Instruction {
        public Invoke {
            args = List.copyOf(args);
        }
    }

    /** Calls the closure in register {@code closure} with its captured values followed by {@code args}. */
    record InvokeClosure(int closure, List<Integer> args, int dst) implements Instruction {
        public InvokeClosure {
            args = List.copyOf(args);
        }
    }

    /**
     * Calls kernel {@code kernel} (an index into {@link Executable#kernels()}) in destination-passing style:
     * {@code args} are the input registers (an ADT argument is flattened to its tensors, as the kernel's C
     * signature flattens a tuple parameter), then the {@code numOutputs} registers of tensors the kernel
     * writes, allocated beforehand by {@link AllocTensor}.
     */
    record InvokePacked(int kernel, List<Integer> args, int numOutputs) implements Instruction {
        public InvokePacked {
            args = List.copyOf(args);
            if (numOutputs < 0 || numOutputs > args.size()) throw new IllegalArgumentException("numOutputs " + numOutputs + " out of range for " + args.size() + " args");
        }
    }

    /** A tensor of the static {@code shape} and {@code dtype} placed at byte {@code offset} of the storage in register {@code storage}. */
    record AllocTensor(int storage, long offset, long[] shape, DType dtype, int dst) implements Instruction {
        public AllocTensor {
            shape = shape.clone();
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof AllocTensor a && a.storage == storage && a.offset == offset && Arrays.equals(a.shape, shape) && a.dtype.equals(dtype) && a.dst == dst;
        }

        @Override
        public int hashCode() {
            return ((storage * 31 + Long.hashCode(offset)) * 31 + Arrays.hashCode(shape)) * 31 + dtype.hashCode() * 7 + dst;
        }

        @Override
        public String toString() {
            return "AllocTensor[storage=" + storage + ", offset=" + offset + ", shape=" + Arrays.toString(shape) + ", dtype=" + dtype + ", dst=" + dst + "]";
        }
    }

    /** The same with the shape read at run time from register {@code shape} (a rank-1 integer tensor, e.g. a {@link ShapeOf} result). */
    record AllocTensorReg(int storage, long offset, int shape, DType dtype, int dst) implements Instruction {}

    /** A block of {@code size} bytes (register {@code size}: an integer scalar) aligned to {@code alignment}; {@code dtypeHint} is what will live in it. */
    record AllocStorage(int size, long alignment, DType dtypeHint, int dst) implements Instruction {}

    /** An ADT value of constructor {@code tag} with {@code fields}; a tuple is tag 0. */
    record AllocADT(int tag, List<Integer> fields, int dst) implements Instruction {
        public AllocADT {
            fields = List.copyOf(fields);
        }
    }

    /** A closure of VM function {@code function} over the {@code captured} registers (its leading parameters). */
    record AllocClosure(int function, List<Integer> captured, int dst) implements Instruction {
        public AllocClosure {
            captured = List.copyOf(captured);
        }
    }

    /** Field {@code index} of the ADT value in {@code object}. */
    record GetField(int object, int index, int dst) implements Instruction {}

    /** The constructor tag of the ADT value in {@code object}, as an int32 scalar. */
    record GetTag(int object, int dst) implements Instruction {}

    /**
     * Compares the scalars in registers {@code test} and {@code target}: equal continues at
     * {@code trueOffset}, different at {@code falseOffset} (both relative to this instruction).
     */
    record If(int test, int target, int trueOffset, int falseOffset) implements Instruction {}

    /** Continues at {@code offset} instructions from here. */
    record Goto(int offset) implements Instruction {}

    /** Constant {@code index} of {@link Executable#constants()}. */
    record LoadConst(int index, int dst) implements Instruction {}

    /** The int64 scalar {@code value}: tags, allocation sizes, a true condition. */
    record LoadConsti(long value, int dst) implements Instruction {}

    /** The shape of the tensor in {@code tensor} as an int64 vector. */
    record ShapeOf(int tensor, int dst) implements Instruction {}

    /** The tensor in {@code tensor} viewed with the shape held in register {@code shape} (same bytes, same element count). */
    record ReshapeTensor(int tensor, int shape, int dst) implements Instruction {}

    /** A copy of the tensor in {@code src} from device {@code srcDevice} to {@code dstDevice} (this slice: the host, 0, only). */
    record DeviceCopy(int src, int srcDevice, int dstDevice, int dst) implements Instruction {}

    /** Drops the value in {@code register}: its last use has passed, so the memory it holds may be reused. */
    record KillRegister(int register) implements Instruction {}

    /** A new mutable reference holding the value in {@code value} (Relay's {@code ref}). */
    record AllocRef(int value, int dst) implements Instruction {}

    /** The value the reference in {@code ref} holds now (Relay's {@code ref_read}). */
    record LoadRef(int ref, int dst) implements Instruction {}

    /** Makes the reference in {@code ref} hold the value in {@code value} (Relay's {@code ref_write}, whose unit result the compiler builds apart). */
    record StoreRef(int ref, int value) implements Instruction {}

    /** Stops the VM with {@code message} (a {@code match} no clause matched). */
    record Fatal(String message) implements Instruction {}
}
