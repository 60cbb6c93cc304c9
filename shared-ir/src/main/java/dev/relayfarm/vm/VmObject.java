package dev.relayfarm.vm;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.runtime.HostBuffers;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * A value in a VM register. Tensors live in native memory (64-byte aligned, what the kernels assume), so
 * a kernel reads its arguments and writes its results in place, without copies; everything else is a
 * Java object. The VM is dynamically typed: the compiler's types are gone once the bytecode exists.
 */
public sealed interface VmObject {
    /**
     * Native memory from {@link Instruction.AllocStorage}: {@code segment}, exactly the bytes asked for, which tensors
     * are views into (so a tensor beyond them is an error whatever block it landed in), inside {@code block}, the run
     * memory's block that holds it, possibly larger (a reused block: {@link FreeBlocks}), handed back whole when the
     * storage is killed.
     */
    record Storage(MemorySegment segment, MemorySegment block) implements VmObject {
        public Storage {
            if (segment.address() < block.address() || segment.address() + segment.byteSize() > block.address() + block.byteSize()) {
                throw new IllegalArgumentException("storage of " + segment.byteSize() + " bytes does not lie in its block of " + block.byteSize() + " bytes");
            }
        }

        /** Storage that is its whole block. */
        public Storage(MemorySegment segment) {
            this(segment, segment);
        }
    }

    /** A dense row-major tensor of {@code dtype} over {@code data} (exactly its byte size). */
    record Tensor(MemorySegment data, int[] shape, DType dtype) implements VmObject {
        public Tensor {
            shape = shape.clone();
        }

        @Override
        public int[] shape() {
            return shape.clone();
        }

        /** A fresh heap copy. */
        public NDArray toNDArray() {
            // HostBuffers.copyOut without a TensorSpec: its boxed shape list is built for every result of every run otherwise
            NDArray a = NDArray.zeros(dtype, shape);
            MemorySegment.copy(data, 0, HostBuffers.heap(a), 0, elements(shape) * dtype.storageBytes() * dtype.lanes());
            return a;
        }

        /**
         * Element 0 as a long: what {@link Instruction.If} compares (a bool or integer condition, a tag,
         * a {@link Instruction.LoadConsti} value). A float scalar counts by its integral part.
         */
        long scalarAsLong() {
            if (data.byteSize() < dtype.storageBytes() || dtype.storageBytes() == 0) {
                throw new VmException("a condition or tag must be a scalar, got a tensor of shape " + Arrays.toString(shape) + " and dtype " + dtype);
            }
            return switch (dtype.code()) {
                case BOOL -> data.get(ValueLayout.JAVA_BYTE, 0) != 0 ? 1 : 0;
                case INT, UINT -> switch (dtype.storageBytes()) {
                    case 1 -> dtype.code() == DType.Code.INT ? data.get(ValueLayout.JAVA_BYTE, 0) : Byte.toUnsignedLong(data.get(ValueLayout.JAVA_BYTE, 0));
                    case 2 -> dtype.code() == DType.Code.INT ? data.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0) : Short.toUnsignedLong(data.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0));
                    case 4 -> dtype.code() == DType.Code.INT ? data.get(ValueLayout.JAVA_INT_UNALIGNED, 0) : Integer.toUnsignedLong(data.get(ValueLayout.JAVA_INT_UNALIGNED, 0));
                    default -> data.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                };
                case FLOAT -> dtype.bits() == 64 ? (long) data.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0) : (long) data.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0);
                default -> throw new VmException("cannot use a " + dtype + " scalar as a condition or tag");
            };
        }

        /** Element count of {@code shape}. */
        static long elements(int[] shape) {
            long n = 1;
            for (int d : shape) n *= d;
            return n;
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }

        @Override
        public String toString() {
            return "Tensor(" + dtype + Arrays.toString(shape) + ")";
        }
    }

    /**
     * A value of an algebraic data type: its constructor's tag and its fields. A tuple is tag 0. Equality
     * is identity and {@code toString} is shallow: a list of 100,000 elements is a value nested 100,000
     * deep, which a structural {@code equals} or {@code toString} would walk by Java recursion.
     */
    record Adt(int tag, List<VmObject> fields) implements VmObject {
        public Adt {
            fields = List.copyOf(fields);
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }

        @Override
        public String toString() {
            return "Adt(tag " + tag + ", " + fields.size() + " fields)";
        }
    }

    /** A function value: VM function {@code function} with the values it captured (its leading parameters). Identity and a shallow {@code toString}, as {@link Adt}. */
    record Closure(int function, List<VmObject> captured) implements VmObject {
        public Closure {
            captured = List.copyOf(captured);
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }

        @Override
        public String toString() {
            return "Closure(function " + function + ", " + captured.size() + " captured)";
        }
    }

    /**
     * A mutable cell (Relay's {@code ref}): the one VM value that changes after it is made, so it is a class compared by
     * identity, not a record. Every register holding it sees a {@link Instruction.StoreRef}.
     */
    final class Ref implements VmObject {
        private VmObject value;

        public Ref(VmObject value) {
            this.value = value;
        }

        public VmObject value() {
            return value;
        }

        void set(VmObject value) {
            this.value = value;
        }

        @Override
        public String toString() {
            return "Ref[" + value + "]";
        }
    }
}
