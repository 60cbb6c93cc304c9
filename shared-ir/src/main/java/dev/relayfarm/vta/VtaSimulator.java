package dev.relayfarm.vta;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Functional and cycle SIMULATOR of a VTA-style accelerator (see the package documentation; this is not hardware).
 *
 * <p>The instruction stream is split by {@link Module#executing} into three per-module queues kept in program order.
 * Each module has a local clock. A module can advance when every token its next instruction pops is present; its
 * start time is its clock or, if later, the push time of each popped token. Among modules that can advance the one
 * that would start earliest goes first (ties in pipeline order), so the functional interleaving follows simulated
 * time: a program with missing dependencies still runs deterministically, in the order the cycle model says the
 * hardware would most likely race. When instructions remain and no module can advance, that is a deadlock.
 *
 * <p>Costs: a GEMM or reset step is one cycle (one batch×blockIn by blockIn×blockOut product); an ALU step is
 * {@link VtaConfig#aluInitiationInterval()} cycles; a LOAD or STORE is {@code dmaLatencyCycles + ceil(DRAM bytes /
 * dmaBytesPerCycle)} on the module that executes it; FINISH is free. Pushed tokens carry the pusher's end time.
 */
public final class VtaSimulator {
    private final VtaConfig config;

    public VtaSimulator(VtaConfig config) {
        this.config = config;
    }

    public VtaConfig config() {
        return config;
    }

    /** Runs {@code program} on fresh on-chip buffers; LOADs read and STOREs write {@code dram} in place. */
    public SimulationResult run(List<Instruction> program, byte[] dram) {
        return new Run(List.copyOf(program), dram).execute();
    }

    private final class Run {
        private final List<Instruction> program;
        private final byte[] dram;
        private final Scratchpad sram = new Scratchpad(config);
        private final Map<Module, List<Integer>> instructions = new EnumMap<>(Module.class);
        private final Map<Module, Integer> next = new EnumMap<>(Module.class);
        private final Map<Module, Long> clock = new EnumMap<>(Module.class);
        private final Map<Module, Long> busy = new EnumMap<>(Module.class);
        private final Map<DependencyQueue, ArrayDeque<Long>> tokens = new EnumMap<>(DependencyQueue.class);
        private final Map<BufferKind, Long> loadedBytes = new EnumMap<>(BufferKind.class);
        private long storedBytes;
        private long gemmOps;
        private long macs;
        private long aluOps;
        private OptionalLong finishCycle = OptionalLong.empty();

        Run(List<Instruction> program, byte[] dram) {
            this.program = program;
            this.dram = dram;
            for (Module m : Module.values()) {
                instructions.put(m, new ArrayList<>());
                next.put(m, 0);
                clock.put(m, 0L);
                busy.put(m, 0L);
            }
            for (DependencyQueue q : DependencyQueue.values()) {
                tokens.put(q, new ArrayDeque<>());
            }
            for (int i = 0; i < program.size(); i++) {
                Instruction insn = program.get(i);
                Module module = Module.executing(insn);
                checkFlags(i, insn, module);
                instructions.get(module).add(i);
            }
        }

        SimulationResult execute() {
            while (true) {
                Module chosen = null;
                long chosenStart = Long.MAX_VALUE;
                List<BlockedInstruction> blocked = new ArrayList<>();
                int remaining = 0;
                for (Module m : Module.values()) {
                    List<Integer> queue = instructions.get(m);
                    int position = next.get(m);
                    if (position == queue.size()) {
                        continue;
                    }
                    remaining += queue.size() - position;
                    int index = queue.get(position);
                    Instruction insn = program.get(index);
                    List<DependencyQueue> missing = new ArrayList<>();
                    long start = clock.get(m);
                    for (DependencyQueue q : pops(m, insn.deps())) {
                        Long pushedAt = tokens.get(q).peekFirst();
                        if (pushedAt == null) {
                            missing.add(q);
                        } else {
                            start = Math.max(start, pushedAt);
                        }
                    }
                    if (!missing.isEmpty()) {
                        blocked.add(new BlockedInstruction(m, index, insn.opcode(), insn.describe(), missing));
                    } else if (start < chosenStart) {
                        chosen = m;
                        chosenStart = start;
                    }
                }
                if (remaining == 0) {
                    return new SimulationResult(sram, stats());
                }
                if (chosen == null) {
                    throw new DeadlockException(blocked, remaining);
                }
                step(chosen, chosenStart);
            }
        }

        private void step(Module module, long start) {
            int position = next.get(module);
            int index = instructions.get(module).get(position);
            Instruction insn = program.get(index);
            for (DependencyQueue q : pops(module, insn.deps())) {
                tokens.get(q).removeFirst();
            }
            long cost = switch (insn) {
                case Load l -> load(index, l);
                case Store s -> store(index, s);
                case Gemm g -> gemm(index, g);
                case Alu a -> alu(index, a);
                case Finish f -> 0L;
            };
            long end = start + cost;
            if (insn instanceof Finish) {
                finishCycle = OptionalLong.of(end);
            }
            clock.put(module, end);
            busy.merge(module, cost, Long::sum);
            DependencyFlags deps = insn.deps();
            if (deps.pushPrev()) {
                tokens.get(module.pushPrevQueue().orElseThrow()).addLast(end);
            }
            if (deps.pushNext()) {
                tokens.get(module.pushNextQueue().orElseThrow()).addLast(end);
            }
            next.put(module, position + 1);
        }

        private List<DependencyQueue> pops(Module module, DependencyFlags deps) {
            List<DependencyQueue> queues = new ArrayList<>(2);
            if (deps.popPrev()) {
                queues.add(module.popPrevQueue().orElseThrow());
            }
            if (deps.popNext()) {
                queues.add(module.popNextQueue().orElseThrow());
            }
            return queues;
        }

        private void checkFlags(int index, Instruction insn, Module module) {
            DependencyFlags d = insn.deps();
            String owner = "it runs on the " + module.name().toLowerCase() + " module, which has no ";
            if (d.popPrev() && module.popPrevQueue().isEmpty()) {
                throw new VtaProgramException(index, insn, "pop_prev_dep is set but " + owner + "previous module");
            }
            if (d.pushPrev() && module.pushPrevQueue().isEmpty()) {
                throw new VtaProgramException(index, insn, "push_prev_dep is set but " + owner + "previous module");
            }
            if (d.popNext() && module.popNextQueue().isEmpty()) {
                throw new VtaProgramException(index, insn, "pop_next_dep is set but " + owner + "next module");
            }
            if (d.pushNext() && module.pushNextQueue().isEmpty()) {
                throw new VtaProgramException(index, insn, "push_next_dep is set but " + owner + "next module");
            }
        }

        private long dmaCycles(long bytes) {
            return config.dmaLatencyCycles() + (bytes + config.dmaBytesPerCycle() - 1) / config.dmaBytesPerCycle();
        }

        private long load(int index, Load l) {
            BufferKind buffer = l.buffer();
            if (buffer == BufferKind.UOP && (l.yPad0() | l.yPad1() | l.xPad0() | l.xPad1()) != 0) {
                throw new VtaProgramException(index, l, "micro-op loads cannot be padded (y_pad_0/y_pad_1/x_pad_0/x_pad_1 must be 0)");
            }
            int entries = config.entries(buffer);
            if (l.sramBase() + l.sramEntries() > entries) {
                throw new VtaProgramException(index, l, "sram_base " + l.sramBase() + " + " + l.rows() + " rows × " + l.columns()
                        + " entries (padding included) = " + (l.sramBase() + l.sramEntries()) + " exceeds the " + buffer + " buffer's " + entries + " entries");
            }
            int entryBytes = config.entryBytes(buffer);
            checkDram(index, l, l.dramBase(), l.ySize(), l.xSize(), l.xStride(), entryBytes);
            for (int r = 0; r < l.rows(); r++) {
                for (int c = 0; c < l.columns(); c++) {
                    int sramEntry = l.sramBase() + r * l.columns() + c;
                    int y = r - l.yPad0();
                    int x = c - l.xPad0();
                    boolean inside = y >= 0 && y < l.ySize() && x >= 0 && x < l.xSize();
                    long dramByte = inside ? (l.dramBase() + (long) y * l.xStride() + x) * entryBytes : -1;
                    copyEntry(buffer, sramEntry, entryBytes, dramByte);
                }
            }
            long bytes = l.dramEntries() * entryBytes;
            loadedBytes.merge(buffer, bytes, Long::sum);
            return dmaCycles(bytes);
        }

        /** Copies one entry from DRAM at {@code dramByte}, or writes zeros when it is padding ({@code dramByte < 0}). */
        private void copyEntry(BufferKind buffer, int sramEntry, int entryBytes, long dramByte) {
            int at = (int) dramByte;
            switch (buffer) {
                case UOP -> sram.uops[sramEntry] = dramByte < 0 ? 0 : readInt(at);
                case INP -> copyBytes(sram.inputs, sramEntry * entryBytes, entryBytes, dramByte);
                case WGT -> copyBytes(sram.weights, sramEntry * entryBytes, entryBytes, dramByte);
                case ACC -> {
                    int lanes = entryBytes / 4;
                    for (int lane = 0; lane < lanes; lane++) {
                        sram.accumulators[sramEntry * lanes + lane] = dramByte < 0 ? 0 : readInt(at + 4 * lane);
                    }
                }
            }
        }

        private void copyBytes(byte[] target, int at, int length, long dramByte) {
            if (dramByte < 0) {
                Arrays.fill(target, at, at + length, (byte) 0);
            } else {
                System.arraycopy(dram, (int) dramByte, target, at, length);
            }
        }

        /** DRAM words are little-endian, as on the ARM and x86 hosts VTA is paired with. */
        private int readInt(int at) {
            return dram[at] & 0xFF | (dram[at + 1] & 0xFF) << 8 | (dram[at + 2] & 0xFF) << 16 | dram[at + 3] << 24;
        }

        private void checkDram(int index, Instruction insn, long dramBase, int ySize, int xSize, int xStride, int entryBytes) {
            if (ySize == 0 || xSize == 0) {
                return;
            }
            long endByte = (dramBase + (long) (ySize - 1) * xStride + xSize) * entryBytes;
            if (endByte > dram.length) {
                throw new VtaProgramException(index, insn, "dram_base " + dramBase + " with y_size " + ySize + ", x_size " + xSize + ", x_stride "
                        + xStride + " reaches DRAM byte " + endByte + " but DRAM has " + dram.length + " bytes");
            }
        }

        private long store(int index, Store s) {
            int entries = config.entries(BufferKind.ACC);
            if (s.sramBase() + s.entries() > entries) {
                throw new VtaProgramException(index, s, "sram_base " + s.sramBase() + " + " + s.ySize() + " rows × " + s.xSize() + " entries = "
                        + (s.sramBase() + s.entries()) + " exceeds the ACC buffer's " + entries + " entries");
            }
            int outBytes = config.outputEntryBytes();
            checkDram(index, s, s.dramBase(), s.ySize(), s.xSize(), s.xStride(), outBytes);
            for (int r = 0; r < s.ySize(); r++) {
                for (int c = 0; c < s.xSize(); c++) {
                    int accFrom = (s.sramBase() + r * s.xSize() + c) * outBytes;
                    int dramFrom = (int) ((s.dramBase() + (long) r * s.xStride() + c) * outBytes);
                    for (int lane = 0; lane < outBytes; lane++) {
                        dram[dramFrom + lane] = (byte) sram.accumulators[accFrom + lane];
                    }
                }
            }
            long bytes = s.entries() * outBytes;
            storedBytes += bytes;
            return dmaCycles(bytes);
        }

        private void checkUopRange(int index, Instruction insn, UopLoop loop) {
            int entries = config.entries(BufferKind.UOP);
            if (loop.uopEnd() > entries) {
                throw new VtaProgramException(index, insn, "uop_end " + loop.uopEnd() + " exceeds the UOP buffer's " + entries + " entries");
            }
        }

        private int entryIndex(int index, Instruction insn, String field, BufferKind buffer, long base, long offset, int i0, int i1, int uop) {
            long entry = base + offset;
            if (entry >= config.entries(buffer)) {
                throw new VtaProgramException(index, insn, field + " index " + entry + " (micro-op #" + uop + " base " + base + " at i0=" + i0
                        + ", i1=" + i1 + ") is outside the " + buffer + " buffer's " + config.entries(buffer) + " entries");
            }
            return (int) entry;
        }

        private long gemm(int index, Gemm g) {
            UopLoop loop = g.loop();
            checkUopRange(index, g, loop);
            int batch = config.batch();
            int blockIn = config.blockIn();
            int blockOut = config.blockOut();
            for (int i0 = 0; i0 < loop.iterOut(); i0++) {
                for (int i1 = 0; i1 < loop.iterIn(); i1++) {
                    for (int u = loop.uopBegin(); u < loop.uopEnd(); u++) {
                        Uop uop = Uop.decode(sram.uops[u]);
                        int acc = entryIndex(index, g, "dst", BufferKind.ACC, uop.dst(), g.dst().offset(i0, i1), i0, i1, u);
                        int accFrom = acc * batch * blockOut;
                        if (g.reset()) {
                            Arrays.fill(sram.accumulators, accFrom, accFrom + batch * blockOut, 0);
                            continue;
                        }
                        int inp = entryIndex(index, g, "src", BufferKind.INP, uop.src(), g.src().offset(i0, i1), i0, i1, u);
                        int wgt = entryIndex(index, g, "wgt", BufferKind.WGT, uop.wgt(), g.wgt().offset(i0, i1), i0, i1, u);
                        int inpFrom = inp * batch * blockIn;
                        int wgtFrom = wgt * blockOut * blockIn;
                        for (int b = 0; b < batch; b++) {
                            for (int o = 0; o < blockOut; o++) {
                                int sum = 0;
                                for (int k = 0; k < blockIn; k++) {
                                    sum += sram.inputs[inpFrom + b * blockIn + k] * sram.weights[wgtFrom + o * blockIn + k];
                                }
                                sram.accumulators[accFrom + b * blockOut + o] += sum;
                            }
                        }
                        macs += (long) batch * blockIn * blockOut;
                    }
                }
            }
            gemmOps += loop.iterations();
            return loop.iterations();
        }

        private long alu(int index, Alu a) {
            UopLoop loop = a.loop();
            checkUopRange(index, a, loop);
            int lanes = config.batch() * config.blockOut();
            for (int i0 = 0; i0 < loop.iterOut(); i0++) {
                for (int i1 = 0; i1 < loop.iterIn(); i1++) {
                    for (int u = loop.uopBegin(); u < loop.uopEnd(); u++) {
                        Uop uop = Uop.decode(sram.uops[u]);
                        int dstFrom = entryIndex(index, a, "dst", BufferKind.ACC, uop.dst(), a.dst().offset(i0, i1), i0, i1, u) * lanes;
                        int srcFrom = a.useImmediate() ? -1
                                : entryIndex(index, a, "src", BufferKind.ACC, uop.src(), a.src().offset(i0, i1), i0, i1, u) * lanes;
                        for (int lane = 0; lane < lanes; lane++) {
                            int operand = a.useImmediate() ? a.immediate() : sram.accumulators[srcFrom + lane];
                            int value = sram.accumulators[dstFrom + lane];
                            sram.accumulators[dstFrom + lane] = apply(a.op(), value, operand);
                        }
                    }
                }
            }
            aluOps += loop.iterations();
            return loop.iterations() * config.aluInitiationInterval();
        }

        private ExecutionStats stats() {
            long total = clock.values().stream().mapToLong(Long::longValue).max().orElse(0);
            Map<DependencyQueue, Integer> leftover = new EnumMap<>(DependencyQueue.class);
            tokens.forEach((q, t) -> {
                if (!t.isEmpty()) {
                    leftover.put(q, t.size());
                }
            });
            return new ExecutionStats(total, busy, loadedBytes, storedBytes, gemmOps, macs, aluOps, leftover, finishCycle);
        }
    }

    /** One lane of the vector ALU. Shift amounts saturate at 31 so that shifting a negative right by 40 gives -1. */
    static int apply(AluOp op, int value, int operand) {
        return switch (op) {
            case MIN -> Math.min(value, operand);
            case MAX -> Math.max(value, operand);
            case ADD -> value + operand;
            case SHR -> operand >= 0 ? value >> Math.min(operand, 31) : value << Math.min(-operand, 31);
            case MUL -> value * operand;
        };
    }
}
