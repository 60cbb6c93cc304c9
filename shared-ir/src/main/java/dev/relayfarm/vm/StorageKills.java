package dev.relayfarm.vm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Liveness-based reuse of kernel results within a run (the first piece of the dissertation's memory planning):
 * after the last instruction that reads a kernel result which never escapes, a {@link Instruction.KillRegister} of
 * its storage hands the block back to the run's memory ({@link RunMemory#release}), and the next allocation of
 * the same size takes it. A chain of 50 kernels then runs in two blocks instead of fifty, as the graph
 * executor's memory plan does.
 *
 * <p>A result escapes (and is never killed) when a Ret, Move, Invoke, InvokeClosure, AllocADT, AllocClosure or
 * ReshapeTensor (a view of the same bytes) takes its register: another frame, value or register could read it
 * later. Reads that cannot keep it are kernel inputs, If operands, ShapeOf and DeviceCopy. Jumps only go
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
        for (int pc = 0; pc < code.size(); pc++) {
            int at = pc;
            switch (code.get(pc)) {
                case Instruction.InvokePacked p -> p.args().forEach(r -> lastRead.put(r, at)); // inputs read, outputs written: both uses
                case Instruction.If i -> {
                    lastRead.put(i.test(), at);
                    lastRead.put(i.target(), at);
                }
                case Instruction.ShapeOf s -> lastRead.put(s.tensor(), at);
                case Instruction.DeviceCopy d -> lastRead.put(d.src(), at);
                case Instruction.Move m -> escaping.add(m.src());
                case Instruction.Ret r -> escaping.add(r.result());
                case Instruction.Invoke v -> escaping.addAll(v.args());
                case Instruction.InvokeClosure v -> {
                    escaping.add(v.closure());
                    escaping.addAll(v.args());
                }
                case Instruction.AllocADT a -> escaping.addAll(a.fields());
                case Instruction.AllocClosure a -> escaping.addAll(a.captured());
                case Instruction.ReshapeTensor s -> escaping.add(s.tensor());
                case Instruction.AllocTensor _, Instruction.AllocTensorReg _, Instruction.AllocStorage _, Instruction.GetField _, Instruction.GetTag _,
                     Instruction.Goto _, Instruction.LoadConst _, Instruction.LoadConsti _, Instruction.KillRegister _, Instruction.Fatal _ -> {}
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
