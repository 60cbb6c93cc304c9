package dev.relayfarm.vm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntConsumer;
import java.util.function.IntUnaryOperator;

/**
 * Liveness-based reuse of kernel results within a run (the first piece of the dissertation's memory planning):
 * after the last instruction that reads a kernel result which never escapes, a {@link Instruction.KillRegister} of
 * its storage hands the block back to the run's memory ({@link RunMemory#release}), and the next allocation of
 * the same size takes it. A chain of 50 kernels then runs in two blocks instead of fifty, as the graph
 * executor's memory plan does.
 *
 * <p>A result escapes (and is never killed) when a Ret, Move, Invoke, InvokeClosure, AllocADT, AllocClosure, AllocRef or StoreRef takes
 * its register: another frame, value or register could read it later. Reads that cannot keep it are kernel inputs,
 * If operands, ShapeOf, DeviceCopy, and the size and shape an allocation reads (a shape function's results). A ReshapeTensor result is a view of the same bytes: its reads count as reads
 * of the result it views and its escape as that result's escape, so a result read only through a reshape is still
 * killed after its view's last read (a reshape-only group, e.g. a flatten between two kernels, otherwise kept the
 * block it views until the run ended). Jumps only go
 * forward, so an instruction after the last read in code order runs after every read on any path; a path that
 * jumps over the kill only keeps the block until the run ends. Killing shifts code, and the If/Goto offsets are
 * rewritten to keep their targets.
 */
final class StorageKills {
    private StorageKills() {}

    /** {@code code} with kills inserted; {@code storageOf} maps each kernel result's tensor register to its storage register. */
    static List<Instruction> insert(List<Instruction> code, Map<Integer, Integer> storageOf) {
        Set<Integer> escaping = new HashSet<>();
        Map<Integer, Integer> lastRead = new HashMap<>();
        // a reshape's register -> the register whose bytes it views (transitively: a reshape of a reshape views the first's)
        Map<Integer, Integer> viewOf = new HashMap<>();
        for (int pc = 0; pc < code.size(); pc++) {
            int at = pc;
            IntUnaryOperator owner = r -> viewOf.getOrDefault(r, r);
            IntConsumer read = r -> lastRead.put(owner.applyAsInt(r), at);
            IntConsumer escape = r -> escaping.add(owner.applyAsInt(r));
            switch (code.get(pc)) {
                case Instruction.InvokePacked p -> p.args().forEach(read::accept); // inputs read, outputs written: both uses
                case Instruction.If i -> {
                    read.accept(i.test());
                    read.accept(i.target());
                }
                case Instruction.ShapeOf s -> read.accept(s.tensor());
                case Instruction.AllocStorage a -> read.accept(a.size()); // a size a kernel computed (a shape function's)
                case Instruction.AllocTensorReg a -> read.accept(a.shape());
                case Instruction.DeviceCopy d -> read.accept(d.src());
                case Instruction.Move m -> escape.accept(m.src());
                case Instruction.Ret r -> escape.accept(r.result());
                case Instruction.Invoke v -> v.args().forEach(escape::accept);
                case Instruction.InvokeClosure v -> {
                    escape.accept(v.closure());
                    v.args().forEach(escape::accept);
                }
                case Instruction.AllocADT a -> a.fields().forEach(escape::accept);
                case Instruction.AllocClosure a -> a.captured().forEach(escape::accept);
                case Instruction.AllocRef a -> escape.accept(a.value());
                case Instruction.StoreRef w -> escape.accept(w.value());
                case Instruction.ReshapeTensor s -> {
                    read.accept(s.tensor());
                    read.accept(s.shape());
                    viewOf.put(s.dst(), owner.applyAsInt(s.tensor()));
                }
                case Instruction.AllocTensor _, Instruction.GetField _, Instruction.GetTag _,
                     Instruction.LoadRef _, Instruction.Goto _, Instruction.LoadConst _, Instruction.LoadConsti _, Instruction.KillRegister _, Instruction.Fatal _ -> {}
            }
        }
        Map<Integer, List<Integer>> killsAfter = new HashMap<>();
        for (Map.Entry<Integer, Integer> e : storageOf.entrySet()) {
            Integer last = lastRead.get(e.getKey());
            if (last != null && !escaping.contains(e.getKey())) killsAfter.computeIfAbsent(last, k -> new ArrayList<>()).add(e.getValue());
        }
        if (killsAfter.isEmpty()) return code;
        // where each original instruction lands; jumps keep their original targets
        int[] moved = new int[code.size() + 1];
        int shift = 0;
        for (int pc = 0; pc < code.size(); pc++) {
            moved[pc] = pc + shift;
            shift += killsAfter.getOrDefault(pc, List.of()).size();
        }
        moved[code.size()] = code.size() + shift;
        List<Instruction> out = new ArrayList<>(code.size() + shift);
        for (int pc = 0; pc < code.size(); pc++) {
            out.add(switch (code.get(pc)) {
                case Instruction.If i -> new Instruction.If(i.test(), i.target(), moved[pc + i.trueOffset()] - moved[pc], moved[pc + i.falseOffset()] - moved[pc]);
                case Instruction.Goto g -> new Instruction.Goto(moved[pc + g.offset()] - moved[pc]);
                default -> code.get(pc);
            });
            for (int storage : killsAfter.getOrDefault(pc, List.of())) out.add(new Instruction.KillRegister(storage));
        }
        return out;
    }
}
