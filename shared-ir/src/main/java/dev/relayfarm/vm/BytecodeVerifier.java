package dev.relayfarm.vm;

import java.util.List;

/**
 * Checks an {@link Executable} before the VM runs it, so a corrupt or hand-edited file fails with a
 * message naming the function and the instruction instead of an index error mid-run: every register is
 * below its function's register count, every function, kernel and constant index exists, every jump
 * lands inside its function, a kernel call passes at least its outputs, and no function runs off its
 * end (its last instruction is a {@link Instruction.Ret}, {@link Instruction.Goto} or {@link Instruction.Fatal}).
 */
public final class BytecodeVerifier {
    private BytecodeVerifier() {}

    public static void verify(Executable exe) {
        for (VmFunction f : exe.functions()) {
            List<Instruction> code = f.code();
            if (code.isEmpty() || !(code.getLast() instanceof Instruction.Ret || code.getLast() instanceof Instruction.Goto || code.getLast() instanceof Instruction.Fatal)) {
                throw new ExecutableFormat.ExecutableFormatException("function " + f.name() + " does not end with Ret, Goto or Fatal: it would run off its end");
            }
            for (int pc = 0; pc < code.size(); pc++) {
                Check c = new Check(exe, f, pc);
                switch (code.get(pc)) {
                    case Instruction.Move m -> c.regs(m.src(), m.dst());
                    case Instruction.Ret r -> c.regs(r.result());
                    case Instruction.Invoke v -> {
                        c.index(v.function(), exe.functions().size(), "function");
                        c.regs(v.args());
                        c.regs(v.dst());
                    }
                    case Instruction.InvokeClosure v -> {
                        c.regs(v.closure(), v.dst());
                        c.regs(v.args());
                    }
                    case Instruction.InvokePacked p -> {
                        c.index(p.kernel(), exe.kernels().size(), "kernel");
                        c.regs(p.args());
                    }
                    case Instruction.AllocTensor a -> c.regs(a.storage(), a.dst());
                    case Instruction.AllocTensorReg a -> c.regs(a.storage(), a.shape(), a.dst());
                    case Instruction.AllocStorage a -> {
                        c.regs(a.size(), a.dst());
                        if (a.alignment() <= 0 || Long.bitCount(a.alignment()) != 1) throw c.error("alignment " + a.alignment() + " is not a power of two");
                    }
                    case Instruction.AllocADT a -> {
                        c.regs(a.fields());
                        c.regs(a.dst());
                    }
                    case Instruction.AllocClosure a -> {
                        c.index(a.function(), exe.functions().size(), "function");
                        c.regs(a.captured());
                        c.regs(a.dst());
                    }
                    case Instruction.GetField g -> c.regs(g.object(), g.dst());
                    case Instruction.GetTag g -> c.regs(g.object(), g.dst());
                    case Instruction.If i -> {
                        c.regs(i.test(), i.target());
                        c.jump(i.trueOffset());
                        c.jump(i.falseOffset());
                    }
                    case Instruction.Goto g -> c.jump(g.offset());
                    case Instruction.LoadConst l -> {
                        c.index(l.index(), exe.constants().size(), "constant");
                        c.regs(l.dst());
                    }
                    case Instruction.LoadConsti l -> c.regs(l.dst());
                    case Instruction.ShapeOf s -> c.regs(s.tensor(), s.dst());
                    case Instruction.ReshapeTensor s -> c.regs(s.tensor(), s.shape(), s.dst());
                    case Instruction.DeviceCopy d -> c.regs(d.src(), d.dst());
                    case Instruction.KillRegister k -> c.regs(k.register());
                    case Instruction.AllocRef a -> c.regs(a.value(), a.dst());
                    case Instruction.LoadRef l -> c.regs(l.ref(), l.dst());
                    case Instruction.StoreRef w -> c.regs(w.ref(), w.value());
                    case Instruction.Fatal _ -> {}
                }
            }
        }
    }

    private record Check(Executable exe, VmFunction f, int pc) {
        void regs(int... registers) {
            for (int r : registers) {
                if (r < 0 || r >= f.registerCount()) throw error("register " + r + " is outside the function's " + f.registerCount() + " registers");
            }
        }

        void regs(List<Integer> registers) {
            for (int r : registers) regs(r);
        }

        void index(int i, int size, String what) {
            if (i < 0 || i >= size) throw error(what + " " + i + " does not exist (the executable has " + size + ")");
        }

        void jump(int offset) {
            int target = pc + offset;
            if (offset == 0 || target < 0 || target >= f.code().size()) throw error("jump by " + offset + " lands outside the function's " + f.code().size() + " instructions");
        }

        ExecutableFormat.ExecutableFormatException error(String what) {
            return new ExecutableFormat.ExecutableFormatException("function " + f.name() + ", instruction " + pc + " (" + f.code().get(pc) + "): " + what);
        }
    }
}
