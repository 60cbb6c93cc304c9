package dev.relayfarm.vta.compile;

import dev.relayfarm.vta.Alu;
import dev.relayfarm.vta.AluOp;
import dev.relayfarm.vta.BufferKind;
import dev.relayfarm.vta.DependencyFlags;
import dev.relayfarm.vta.Finish;
import dev.relayfarm.vta.Gemm;
import dev.relayfarm.vta.IndexFactors;
import dev.relayfarm.vta.Instruction;
import dev.relayfarm.vta.InstructionCodec;
import dev.relayfarm.vta.Load;
import dev.relayfarm.vta.Store;
import dev.relayfarm.vta.Uop;
import dev.relayfarm.vta.UopLoop;
import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Lowers one {@link QuantizedLayer} to an instruction stream for the simulated accelerator under a {@link VtaSchedule}.
 *
 * <p>Tiles: output-channel blocks (outer) × output rows (inner), each accumulated over reduction steps of
 * {@code tileCiBlocks} input-channel blocks. Tile t uses accumulator half {@code t % vt}; reduction step q (counted
 * over the layer) uses input and weight half {@code q % vt}:
 * <ul>
 *   <li>load module, per step: one 2-D weight DMA for the tile's channel blocks and the step's input blocks (skipped
 *       when a one-step reduction finds them still in the half from tile t - vt), then per input-channel block a 2-D
 *       strided DMA of the input rows the tile's output rows read, with the convolution's zero padding done by the
 *       DMA's pad fields (im2col-free: the GEMM micro-ops index the padded rows directly);
 *   <li>compute: the epilogue constants into the accumulator buffer, a GEMM reset, per step one GEMM whose micro-ops
 *       walk (channel block, input block, ky, kx) and whose loops walk (output row, output column) with the stride in
 *       the input factors, then the epilogue as ALU ops (see {@link FixedPointPlan} for the requantize);
 *   <li>store module: one 2-D store per output plane (four byte planes for an int32 output, made by ALU shifts).
 * </ul>
 * Tokens: the last load of a step pushes to compute, whose GEMM pops it and, when a later step will reuse the half,
 * pushes it back to load, whose first load of step q+vt pops it; the last compute op pushes to store; the last
 * store hands the accumulator half back to compute (tile t+vt's first op pops it) and, for the last tile, to FINISH.
 */
public final class LayerLowering {
    private LayerLowering() {
    }

    /** An ALU step of the epilogue: the operand is an immediate, a per-channel constant k, or another region. */
    private record AluStep(AluOp op, int dstRegion, Operand kind, int value) {
    }

    private enum Operand { IMMEDIATE, CONSTANT, REGION }

    /** Regions of the accumulator tile: A holds the accumulator, C the requantized value, T a temporary. */
    private static final int A = 0, C = 1, T = 2;

    /** The epilogue resolved to ALU steps, per-channel constants, regions and the region holding the result. */
    private record Epilogue(List<AluStep> steps, List<int[]> constants, int regions, int result) {
    }

    public static LoweredLayer lower(QuantizedLayer layer, VtaSchedule schedule, VtaConfig config) {
        return new Builder(layer, schedule, config).build();
    }

    /** Rejects a schedule whose tiles do not fit the buffers, naming the buffer; returns normally when it fits. */
    public static void checkFits(QuantizedLayer layer, VtaSchedule schedule, VtaConfig config) {
        new Builder(layer, schedule, config);
    }

    /**
     * What of the epilogue decides the layer's cost under a schedule, without its constants' values: the ALU steps in
     * order (op and operand kind: {@code i} immediate, {@code k} per-channel constant, {@code r} region), the
     * accumulator regions a tile needs and the constant vectors it keeps resident, e.g.
     * {@code "MAX.k MIN.k MUL.i ADD.r MUL.k ADD.i SHR.i; regions 2; constants 3"}. Two layers of one geometry and
     * this shape lower to instruction streams that differ only in data, so the cycle model gives them equal cycles
     * under every schedule: it is part of a tuning workload key.
     */
    public static String epilogueShape(QuantizedLayer layer) {
        Epilogue e = epilogue(layer);
        StringBuilder s = new StringBuilder();
        for (AluStep st : e.steps()) {
            if (!s.isEmpty()) s.append(' ');
            s.append(st.op().name()).append('.').append(switch (st.kind()) {
                case IMMEDIATE -> 'i';
                case CONSTANT -> 'k';
                case REGION -> 'r';
            });
        }
        return s.append("; regions ").append(e.regions()).append("; constants ").append(e.constants().size()).toString();
    }

    private static Epilogue epilogue(QuantizedLayer layer) {
        int cout = layer.geometry().channelsOut();
        List<AluStep> steps = new ArrayList<>();
        List<int[]> constants = new ArrayList<>();
        int current = A;
        boolean requantized = false;
        List<EpilogueOp> ops = layer.epilogue();
        // peepholes, each exact: a relu right before the requantize folds into its lower saturation bound; a relu on a
        // value known to be >= 0 and a clip the requantize's saturation already guarantees are dropped
        Integer knownMin = null, knownMax = null;
        for (int i = 0; i < ops.size(); i++) {
            EpilogueOp op = ops.get(i);
            boolean reluFolds = op instanceof EpilogueOp.Relu && i + 1 < ops.size() && ops.get(i + 1) instanceof EpilogueOp.Requantize;
            if (op instanceof EpilogueOp.Relu && (reluFolds || knownMin != null && knownMin >= 0)) continue;
            if (op instanceof EpilogueOp.Clip c && knownMin != null && knownMax != null && c.lo() <= knownMin && knownMax <= c.hi()) continue;
            boolean afterRelu = i > 0 && ops.get(i - 1) instanceof EpilogueOp.Relu;
            knownMin = null;
            knownMax = null;
            switch (op) {
                case EpilogueOp.BiasAdd b -> {
                    if (b.bias().length != cout) throw new IllegalArgumentException(layer.name() + ": bias has " + b.bias().length + " values for " + cout + " channels");
                    steps.add(new AluStep(AluOp.ADD, current, Operand.CONSTANT, constant(constants, b.bias())));
                }
                case EpilogueOp.Relu r -> steps.add(immediate(AluOp.MAX, current, 0, constants, cout));
                case EpilogueOp.Clip c -> {
                    steps.add(immediate(AluOp.MAX, current, c.lo(), constants, cout));
                    steps.add(immediate(AluOp.MIN, current, c.hi(), constants, cout));
                    knownMin = c.lo();
                    knownMax = c.hi();
                }
                case EpilogueOp.Requantize q -> {
                    if (requantized) throw new IllegalArgumentException(layer.name() + ": two requantizes in one epilogue");
                    if (q.m0().length != cout) throw new IllegalArgumentException(layer.name() + ": requantize has " + q.m0().length + " channels, the layer " + cout);
                    requantized = true;
                    FixedPointPlan plan = FixedPointPlan.of(q);
                    int[] lo = plan.lo(); // a copy already
                    // max(max(a, 0), lo) = max(a, max(lo, 0))
                    if (afterRelu) for (int c = 0; c < lo.length; c++) lo[c] = Math.max(lo[c], 0);
                    steps.add(new AluStep(AluOp.MAX, A, Operand.CONSTANT, constant(constants, lo)));
                    steps.add(new AluStep(AluOp.MIN, A, Operand.CONSTANT, constant(constants, plan.hi())));
                    boolean carrying = false;
                    for (FixedPointPlan.Segment s : plan.segments()) {
                        if (s.multiplies() && !carrying) {
                            // the first digit starts the carry: C = A · digit (copied by zeroing and adding: the ALU has no move)
                            steps.add(new AluStep(AluOp.MUL, C, Operand.IMMEDIATE, 0));
                            steps.add(new AluStep(AluOp.ADD, C, Operand.REGION, A));
                            steps.add(new AluStep(AluOp.MUL, C, Operand.CONSTANT, constant(constants, s.digit())));
                        } else if (s.multiplies()) {
                            // T = A · digit, then C += T
                            steps.add(new AluStep(AluOp.MUL, T, Operand.IMMEDIATE, 0));
                            steps.add(new AluStep(AluOp.ADD, T, Operand.REGION, A));
                            steps.add(new AluStep(AluOp.MUL, T, Operand.CONSTANT, constant(constants, s.digit())));
                            steps.add(new AluStep(AluOp.ADD, C, Operand.REGION, T));
                        } else if (!carrying) {
                            steps.add(new AluStep(AluOp.MUL, C, Operand.IMMEDIATE, 0));
                        }
                        carrying = true;
                        if (s.round() != 0) steps.add(immediate(AluOp.ADD, C, s.round(), constants, cout));
                        steps.add(new AluStep(AluOp.SHR, C, Operand.IMMEDIATE, s.width()));
                    }
                    if (plan.hasHigh()) {
                        steps.add(new AluStep(AluOp.MUL, A, Operand.CONSTANT, constant(constants, plan.high())));
                        steps.add(new AluStep(AluOp.ADD, C, Operand.REGION, A));
                    }
                    current = C;
                    if (plan.withinClip()) {
                        knownMin = q.qmin();
                        knownMax = q.qmax();
                    }
                }
            }
        }
        if (layer.int32Output()) {
            if (requantized) throw new IllegalArgumentException(layer.name() + ": an int32 output after a requantize is not an accelerator layer");
            // byte planes: region p = value >> 8p, stored as its low 8 bits
            for (int p = 1; p < 4; p++) {
                steps.add(new AluStep(AluOp.MUL, p, Operand.IMMEDIATE, 0));
                steps.add(new AluStep(AluOp.ADD, p, Operand.REGION, p - 1));
                steps.add(new AluStep(AluOp.SHR, p, Operand.IMMEDIATE, 8));
            }
        }
        // the tile needs as many accumulator regions as the steps touch (T only when two digits multiply)
        int regions = 1;
        for (AluStep st : steps) regions = Math.max(regions, 1 + Math.max(st.dstRegion(), st.kind() == Operand.REGION ? st.value() : 0));
        return new Epilogue(steps, constants, regions, current);
    }

    /** An immediate when it fits the 16-bit field, else the same value as a per-channel constant. */
    private static AluStep immediate(AluOp op, int region, int value, List<int[]> constants, int channels) {
        if (value >= Short.MIN_VALUE && value <= Short.MAX_VALUE) return new AluStep(op, region, Operand.IMMEDIATE, value);
        int[] all = new int[channels];
        java.util.Arrays.fill(all, value);
        return new AluStep(op, region, Operand.CONSTANT, constant(constants, all));
    }

    private static int constant(List<int[]> constants, int[] perChannel) {
        constants.add(perChannel.clone());
        return constants.size() - 1;
    }

    private static final class Builder {
        private final QuantizedLayer layer;
        private final VtaSchedule schedule;
        private final VtaConfig config;
        private final ConvGeometry g;
        private final Epilogue epilogue;
        private final int inBlocks, outBlocks, paddedWidth, xSize, xPad1, tileRows, tileBlocks, ciBlocks, steps, vt;
        private final int inpHalf, wgtHalf, accHalf, regionEntries;
        private final List<Uop> uops = new ArrayList<>();
        private final Map<List<Uop>, Integer> uopRanges = new HashMap<>();

        Builder(QuantizedLayer layer, VtaSchedule schedule, VtaConfig config) {
            if (config.batch() != 1) throw new IllegalArgumentException("the layer lowering is written for BATCH = 1, got " + config.batch());
            this.layer = layer;
            this.schedule = schedule;
            this.config = config;
            this.g = layer.geometry();
            this.epilogue = epilogue(layer);
            inBlocks = BlockedLayout.ceilDiv(layer.gemmChannelsIn(), config.blockIn());
            outBlocks = BlockedLayout.ceilDiv(g.channelsOut(), config.blockOut());
            int needed = (g.outWidth() - 1) * g.strideW() + g.kernelW();
            xSize = Math.min(g.width(), needed - g.padLeft());
            xPad1 = Math.max(0, needed - g.padLeft() - g.width());
            paddedWidth = needed;
            tileRows = Math.min(schedule.tileRows(), g.outHeight());
            tileBlocks = Math.min(schedule.tileCoBlocks(), outBlocks);
            ciBlocks = Math.min(schedule.tileCiBlocks(), inBlocks);
            steps = BlockedLayout.ceilDiv(inBlocks, ciBlocks);
            vt = schedule.virtualThreads();
            if (g.padLeft() > 15 || xPad1 > 15 || g.padTop() > 15 || g.padBottom() > 15) {
                throw new IllegalArgumentException(layer.name() + ": padding " + g + " exceeds the DMA's 4-bit pad fields (at most 15)");
            }
            long inp = (long) ciBlocks * inputRows(tileRows) * paddedWidth;
            long wgt = (long) tileBlocks * ciBlocks * g.kernelH() * g.kernelW();
            regionEntries = tileBlocks * tileRows * g.outWidth();
            long acc = (long) epilogue.regions() * regionEntries + (long) tileBlocks * epilogue.constants().size();
            inpHalf = fit(BufferKind.INP, inp);
            wgtHalf = fit(BufferKind.WGT, wgt);
            accHalf = fit(BufferKind.ACC, acc);
        }

        /** The entries of one buffer half; throws when a tile needs more. */
        private int fit(BufferKind buffer, long needed) {
            int capacity = config.entries(buffer);
            if (needed * vt > capacity) throw new BufferCapacityException(layer.name(), schedule, buffer, needed * vt, config.entryBytes(buffer), capacity);
            return capacity / vt;
        }

        private int inputRows(int outRows) {
            return (outRows - 1) * g.strideH() + g.kernelH();
        }

        LoweredLayer build() {
            List<Instruction> body = new ArrayList<>();
            int oh = g.outHeight(), ow = g.outWidth();
            int rowTiles = BlockedLayout.ceilDiv(oh, tileRows), blockTiles = BlockedLayout.ceilDiv(outBlocks, tileBlocks);
            int tiles = rowTiles * blockTiles;
            int k = epilogue.constants().size();
            BlockedLayout layout = null;
            // the layout's DRAM offsets depend on the micro-op count, known after emission: emit, then place and re-emit
            for (int pass = 0; pass < 2; pass++) {
                body.clear();
                uops.clear();
                uopRanges.clear();
                BlockedLayout at = pass == 0 ? BlockedLayout.of(layer, config, 0, k) : layout;
                int t = 0;
                for (int bt = 0; bt < blockTiles; bt++) {
                    for (int rt = 0; rt < rowTiles; rt++, t++) {
                        int c0 = bt * tileBlocks, blocks = Math.min(tileBlocks, outBlocks - c0);
                        int r0 = rt * tileRows, rows = Math.min(tileRows, oh - r0);
                        // tile t - vt used the same buffer halves for the same channel blocks: its constants are still
                        // there, and so are its weights when the reduction is one step
                        tile(body, at, t, tiles, c0, blocks, r0, rows, rt >= vt);
                    }
                }
                body.add(new Finish(DependencyFlags.NONE.withPopNext()));
                if (uops.size() > config.entries(BufferKind.UOP)) {
                    throw new BufferCapacityException(layer.name(), schedule, BufferKind.UOP, uops.size(), config.entryBytes(BufferKind.UOP), config.entries(BufferKind.UOP));
                }
                layout = BlockedLayout.of(layer, config, uops.size(), k);
            }
            List<Instruction> program = new ArrayList<>();
            program.add(Load.contiguous(DependencyFlags.NONE, BufferKind.UOP, 0, layout.uopBase(), uops.size()));
            program.addAll(body);
            for (int i = 0; i < program.size(); i++) {
                try {
                    InstructionCodec.encode(program.get(i));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(layer.name() + " with schedule (" + schedule + "), instruction #" + i + ": " + e.getMessage(), e);
                }
            }
            byte[] dram = new byte[layout.dramBytes()];
            int[] words = new int[uops.size()];
            for (int i = 0; i < words.length; i++) words[i] = uops.get(i).encode();
            layout.putUops(dram, words);
            layout.putWeights(dram, layer);
            for (int c = 0; c < k; c++) layout.putConstant(dram, c, epilogue.constants().get(c));
            return new LoweredLayer(layer, schedule, config, program, layout, dram);
        }

        private void tile(List<Instruction> out, BlockedLayout at, int t, int tiles, int c0, int blocks, int r0, int rows, boolean resident) {
            int accBase = (t % vt) * accHalf;
            int ow = g.outWidth(), oh = g.outHeight(), kh = g.kernelH(), kw = g.kernelW();
            boolean reuseLater = t + vt < tiles;
            int pixels = rows * ow;
            int inRows = inputRows(rows);
            int constBase = accBase + epilogue.regions() * regionEntries;
            int k = epilogue.constants().size();
            int y0 = r0 * g.strideH() - g.padTop();
            int yPad0 = Math.max(0, -y0), yPad1 = Math.max(0, y0 + inRows - g.height());
            int ySize = inRows - yPad0 - yPad1;
            if (ySize <= 0) {
                ySize = 0;
                yPad0 = inRows;
                yPad1 = 0;
            }
            if (yPad0 > 15 || yPad1 > 15) throw new IllegalArgumentException(layer.name() + ": a tile's row padding " + yPad0 + "/" + yPad1 + " exceeds the DMA's 4-bit pad fields");

            List<Instruction> compute = new ArrayList<>();
            // the epilogue constants sit beside the regions, untouched by compute: resident like the weights
            if (k > 0 && !resident) compute.add(Load.contiguous(DependencyFlags.NONE, BufferKind.ACC, constBase, at.constBase() + (long) c0 * k, blocks * k));
            compute.add(new Gemm(DependencyFlags.NONE, true, loop(List.of(new Uop(accBase, 0, 0)), blocks * pixels, 1), new IndexFactors(1, 0),
                    IndexFactors.ZERO, IndexFactors.ZERO));
            if (t >= vt) compute.set(0, withDeps(compute.get(0), DependencyFlags.NONE.withPopNext()));

            // reduction steps: step q (counted over the whole layer) loads into input / weight half q % vt
            for (int j = 0; j < steps; j++) {
                int q = t * steps + j, total = tiles * steps;
                int inpBase = (q % vt) * inpHalf, wgtBase = (q % vt) * wgtHalf;
                int ci0 = j * ciBlocks, cis = Math.min(ciBlocks, inBlocks - ci0);
                List<Instruction> loads = new ArrayList<>();
                if (!(resident && steps == 1)) {
                    // channel blocks c0.. of reduction blocks ci0..: one row of weight blocks per output-channel block
                    loads.add(new Load(DependencyFlags.NONE, BufferKind.WGT, wgtBase, at.weightBase() + ((long) c0 * inBlocks + ci0) * kh * kw, blocks,
                            cis * kh * kw, inBlocks * kh * kw, 0, 0, 0, 0));
                }
                for (int c = 0; c < cis; c++) {
                    long dram = at.inputBase() + ((long) (ci0 + c) * g.height() + Math.max(y0, 0)) * g.width();
                    loads.add(new Load(DependencyFlags.NONE, BufferKind.INP, inpBase + c * inRows * paddedWidth, dram, ySize, xSize, g.width(), yPad0, yPad1,
                            g.padLeft(), xPad1));
                }
                if (q >= vt) loads.set(0, withDeps(loads.get(0), DependencyFlags.NONE.withPopNext()));
                loads.set(loads.size() - 1, withDeps(loads.get(loads.size() - 1), DependencyFlags.NONE.withPushNext()));
                out.addAll(loads);

                List<Uop> gemm = new ArrayList<>();
                for (int b = 0; b < blocks; b++) {
                    for (int c = 0; c < cis; c++) {
                        for (int ky = 0; ky < kh; ky++) {
                            for (int kx = 0; kx < kw; kx++) {
                                gemm.add(new Uop(accBase + b * pixels, inpBase + (c * inRows + ky) * paddedWidth + kx, wgtBase + ((b * cis + c) * kh + ky) * kw + kx));
                            }
                        }
                    }
                }
                DependencyFlags gemmDeps = DependencyFlags.NONE.withPopPrev();
                if (q + vt < total) gemmDeps = gemmDeps.withPushPrev();
                compute.add(new Gemm(gemmDeps, false, loop(gemm, rows, ow), new IndexFactors(ow, 1), new IndexFactors(g.strideH() * paddedWidth, g.strideW()),
                        IndexFactors.ZERO));
            }
            for (AluStep s : epilogue.steps()) compute.add(alu(s, accBase, constBase, k, blocks, pixels));
            compute.set(compute.size() - 1, withDeps(compute.get(compute.size() - 1), DependencyFlags.NONE.withPushNext()));
            out.addAll(compute);

            // store module
            List<Instruction> stores = new ArrayList<>();
            int planes = at.outputPlanes();
            for (int p = 0; p < planes; p++) {
                int region = planes == 1 ? epilogue.result() : p;
                long dram = at.outputBase() + p * at.outputPlaneEntries() + ((long) c0 * oh + r0) * ow;
                stores.add(new Store(DependencyFlags.NONE, accBase + region * regionEntries, dram, blocks, pixels, oh * ow));
            }
            stores.set(0, withDeps(stores.get(0), DependencyFlags.NONE.withPopPrev()));
            if (reuseLater || t == tiles - 1) stores.set(stores.size() - 1, withDeps(stores.get(stores.size() - 1), DependencyFlags.NONE.withPushPrev()));
            out.addAll(stores);
        }

        private Alu alu(AluStep s, int accBase, int constBase, int k, int blocks, int pixels) {
            int dst = accBase + s.dstRegion() * regionEntries;
            IndexFactors walk = new IndexFactors(1, 0);
            return switch (s.kind()) {
                case IMMEDIATE -> Alu.withImmediate(DependencyFlags.NONE, s.op(), loop(List.of(new Uop(dst, 0, 0)), blocks * pixels, 1), walk, s.value());
                case REGION -> Alu.withTensor(DependencyFlags.NONE, s.op(),
                        loop(List.of(new Uop(dst, accBase + s.value() * regionEntries, 0)), blocks * pixels, 1), walk, walk);
                case CONSTANT -> {
                    // one micro-op per channel block: its pixels walk the destination, the constant entry stays put
                    List<Uop> perBlock = new ArrayList<>();
                    for (int b = 0; b < blocks; b++) perBlock.add(new Uop(dst + b * pixels, constBase + b * k + s.value(), 0));
                    yield Alu.withTensor(DependencyFlags.NONE, s.op(), loop(perBlock, pixels, 1), walk, IndexFactors.ZERO);
                }
            };
        }

        /** Places {@code group} in the micro-op buffer (once per distinct group) and loops over it. */
        private UopLoop loop(List<Uop> group, int iterOut, int iterIn) {
            int begin = uopRanges.computeIfAbsent(List.copyOf(group), gr -> {
                int at = uops.size();
                uops.addAll(gr);
                return at;
            });
            return new UopLoop(begin, begin + group.size(), iterOut, iterIn);
        }
    }

    /** The instruction with {@code extra} flags added to its own. */
    static Instruction withDeps(Instruction insn, DependencyFlags extra) {
        DependencyFlags d = insn.deps();
        DependencyFlags m = new DependencyFlags(d.popPrev() || extra.popPrev(), d.popNext() || extra.popNext(), d.pushPrev() || extra.pushPrev(),
                d.pushNext() || extra.pushNext());
        return switch (insn) {
            case Load l -> new Load(m, l.buffer(), l.sramBase(), l.dramBase(), l.ySize(), l.xSize(), l.xStride(), l.yPad0(), l.yPad1(), l.xPad0(), l.xPad1());
            case Store s -> new Store(m, s.sramBase(), s.dramBase(), s.ySize(), s.xSize(), s.xStride());
            case Gemm gm -> new Gemm(m, gm.reset(), gm.loop(), gm.dst(), gm.src(), gm.wgt());
            case Alu a -> new Alu(m, a.op(), a.loop(), a.dst(), a.src(), a.useImmediate(), a.immediate());
            case Finish f -> new Finish(m);
        };
    }
}
