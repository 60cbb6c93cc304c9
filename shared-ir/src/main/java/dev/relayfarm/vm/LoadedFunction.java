package dev.relayfarm.vm;

import dev.relayfarm.ir.DType;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A function's bytecode as the {@link VirtualMachine} runs it: the instructions in an array, and beside them, by
 * instruction index, what the interpreter would otherwise derive from an instruction every time it runs it. The
 * graph executor does all of this once at compile time; the VM does it once when it is made, so a static model's
 * kernel call costs the interpreter no conversion, boxing or map lookup (profiled on mnist8 before: the
 * {@link Instruction.LoadConsti} scalar's map lookup, the {@link Instruction.AllocTensor} shape's copy to
 * {@code int[]}, the boxed {@link Instruction.InvokePacked} operand list were most of the VM's own time).
 *
 * <p>Nothing here depends on a run: the values are the instructions' own operands in another form, or constants
 * the VM keeps for its lifetime, so reusing them across runs (with any inputs) cannot go stale. Dynamic cases keep
 * their run-time path: {@link Instruction.AllocTensorReg} reads its shape from a register, and a static shape that
 * does not fit an {@code int} is left unconverted here so running it is the fault it always was, not a load error.
 */
final class LoadedFunction {
    final Instruction[] code;
    /** For a {@link Instruction.LoadConsti}: its int64 scalar tensor; null elsewhere. */
    final VmObject.Tensor[] immediates;
    /** For an {@link Instruction.AllocTensor}: its shape as ints (the tensor copies it, so one array serves every run); null elsewhere. */
    final int[][] shapes;
    /** For an {@link Instruction.AllocTensor} with a shape in {@link #shapes}: its tensor's bytes. */
    final long[] tensorBytes;
    /** For an {@link Instruction.InvokePacked}: its operand registers, unboxed; null elsewhere. */
    final int[][] operands;
    /**
     * For an {@link Instruction.AllocStorage} right after the {@link Instruction.LoadConsti} of its size (how the compiler
     * emits every static kernel result): that scalar tensor and its value. The VM uses the value when the size register
     * holds that very tensor (an identity check, so a jump into the AllocStorage with another size in the register
     * still reads the register), instead of reading native memory through the constant arena's liveness checks.
     */
    final VmObject.Tensor[] sizeScalars;
    final long[] sizeValues;

    /** {@code scalar} makes the VM's shared scalar tensor of a value and dtype (it lives in the VM's constant memory). */
    LoadedFunction(VmFunction f, BiFunction<Long, DType, VmObject.Tensor> scalar) {
        List<Instruction> list = f.code();
        int n = list.size();
        code = list.toArray(Instruction[]::new);
        immediates = new VmObject.Tensor[n];
        shapes = new int[n][];
        tensorBytes = new long[n];
        operands = new int[n][];
        sizeScalars = new VmObject.Tensor[n];
        sizeValues = new long[n];
        for (int pc = 0; pc < n; pc++) {
            switch (code[pc]) {
                case Instruction.LoadConsti c -> immediates[pc] = scalar.apply(c.value(), DType.INT64);
                case Instruction.AllocTensor a -> {
                    int[] shape = intsOrNull(a.shape());
                    if (shape != null) {
                        shapes[pc] = shape;
                        tensorBytes[pc] = VmObject.Tensor.elements(shape) * a.dtype().storageBytes() * a.dtype().lanes();
                    }
                }
                case Instruction.InvokePacked p -> operands[pc] = p.args().stream().mapToInt(Integer::intValue).toArray();
                case Instruction.AllocStorage a -> {
                    if (pc > 0 && code[pc - 1] instanceof Instruction.LoadConsti c && c.dst() == a.size()) {
                        sizeScalars[pc] = immediates[pc - 1];
                        sizeValues[pc] = c.value();
                    }
                }
                case Instruction.Move _, Instruction.Ret _, Instruction.Invoke _, Instruction.InvokeClosure _, Instruction.AllocTensorReg _,
                     Instruction.AllocADT _, Instruction.AllocClosure _, Instruction.GetField _, Instruction.GetTag _,
                     Instruction.If _, Instruction.Goto _, Instruction.LoadConst _, Instruction.ShapeOf _, Instruction.ReshapeTensor _,
                     Instruction.DeviceCopy _, Instruction.KillRegister _, Instruction.AllocRef _, Instruction.LoadRef _, Instruction.StoreRef _,
                     Instruction.Fatal _ -> {}
            }
        }
    }

    private static int[] intsOrNull(long[] shape) {
        int[] out = new int[shape.length];
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] != (int) shape[i]) return null;
            out[i] = (int) shape[i];
        }
        return out;
    }
}
