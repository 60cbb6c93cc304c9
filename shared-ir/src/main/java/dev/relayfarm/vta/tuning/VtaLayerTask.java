package dev.relayfarm.vta.tuning;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.serde.Sha256;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.ConvGeometry;
import dev.relayfarm.vta.compile.LayerLowering;
import dev.relayfarm.vta.compile.QuantizedLayer;
import dev.relayfarm.vta.compile.VtaSchedule;
import dev.relayfarm.vta.compile.VtaScheduleSpace;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;

/**
 * One offloaded layer as a tuning task for the simulated accelerator (the VTA counterpart of the CPU's
 * {@code TuningTask}): the layer, its region as Relay ({@code reference}: the interpreter's int8 result is what every
 * schedule must reproduce bit for bit) and the accelerator configuration. A {@link VtaSchedule} is a
 * {@link ScheduleConfig} of template {@link #TEMPLATE} with four integer knobs, so schedules are stored, compared and
 * sent like the CPU templates' configs:
 * <pre>
 * {"template":"vta.gemm_tiles","knobs":{"tile_ci_blocks":4,"tile_co_blocks":2,"tile_rows":7,"virtual_threads":2}}
 * </pre>
 * {@code tile_ci_blocks} is spelled as the layer's block count when the whole reduction is one step
 * ({@link VtaSchedule#ALL}), so each schedule has one spelling.
 *
 * <p>The workload key ({@link #workloadKey}) is built from the layer's geometry, dtypes and epilogue shape, never its
 * weights or constants: layers that share it run the same instruction stream shape, so their cycles are equal under
 * every schedule and one record serves them all.
 */
public record VtaLayerTask(QuantizedLayer layer, Function reference, VtaConfig config) {
    public static final String TEMPLATE = "vta.gemm_tiles";
    static final String ROWS = "tile_rows", CO = "tile_co_blocks", CI = "tile_ci_blocks", VT = "virtual_threads";
    private static final List<String> KNOBS = List.of(CI, CO, ROWS, VT);

    public VtaLayerTask {
        Objects.requireNonNull(layer, "layer");
        Objects.requireNonNull(reference, "reference");
        Objects.requireNonNull(config, "config");
        if (reference.params().size() != 1) {
            throw new IllegalArgumentException(layer.name() + ": a layer's reference takes its one input, got " + reference.params().size() + " parameters");
        }
    }

    /** The workload key: {@link #workloadKey(QuantizedLayer)} of the layer. */
    public String key() {
        return workloadKey(layer);
    }

    /**
     * E.g. {@code vta.conv2d[ci=64,h=14,w=14,co=64,k=3x3,s=1x1,p=1,1,1,1,in=int8,out=uint8,alu=MAX.k MIN.k ...; regions 2; constants 3]}.
     */
    public static String workloadKey(QuantizedLayer layer) {
        ConvGeometry g = layer.geometry();
        return "vta." + (layer.dense() ? "dense" : "conv2d") + "[ci=" + g.channelsIn() + ",h=" + g.height() + ",w=" + g.width() + ",co=" + g.channelsOut()
                + ",k=" + g.kernelH() + "x" + g.kernelW() + ",s=" + g.strideH() + "x" + g.strideW() + ",p=" + g.padTop() + "," + g.padLeft() + ","
                + g.padBottom() + "," + g.padRight() + ",in=" + layer.inputDtype() + ",out=" + layer.outputDtype() + ",alu=" + LayerLowering.epilogueShape(layer) + "]";
    }

    /** The schedules worth measuring ({@link VtaScheduleSpace#candidates}: only those whose tiles fit), as configs. */
    public List<ScheduleConfig> candidates() {
        return VtaScheduleSpace.candidates(layer, config).stream().map(this::config).toList();
    }

    public ScheduleConfig defaultConfig() {
        return config(VtaScheduleSpace.defaultSchedule(layer, config));
    }

    /** Input-channel blocks of the reduction: the value {@code tile_ci_blocks} takes for "all". */
    private int inBlocks() {
        return Math.ceilDiv(layer.gemmChannelsIn(), config.blockIn());
    }

    public ScheduleConfig config(VtaSchedule s) {
        Map<String, Object> knobs = new TreeMap<>();
        knobs.put(ROWS, s.tileRows());
        knobs.put(CO, s.tileCoBlocks());
        knobs.put(CI, Math.min(s.tileCiBlocks(), inBlocks()));
        knobs.put(VT, s.virtualThreads());
        return new ScheduleConfig(TEMPLATE, knobs);
    }

    /**
     * The schedule {@code c} names. An {@link InvalidConfigException} names the layer and what is wrong: another
     * template, a missing or unknown knob, a value that is not a schedule (non-positive tiles, 3 virtual threads).
     * Whether its tiles fit the buffers is the lowering's question ({@code BufferCapacityException}).
     */
    public VtaSchedule schedule(ScheduleConfig c) {
        if (!c.template().equals(TEMPLATE)) throw new InvalidConfigException(layer.name() + ": config is for template " + c.template() + ", not " + TEMPLATE);
        for (String k : c.knobs().keySet()) {
            if (!KNOBS.contains(k)) throw new InvalidConfigException(layer.name() + ": " + TEMPLATE + " has no knob " + k + " (knobs: " + KNOBS + ")");
        }
        for (String k : KNOBS) {
            if (!c.knobs().containsKey(k)) throw new InvalidConfigException(layer.name() + ": " + TEMPLATE + " config has no value for knob " + k);
        }
        int ci = c.getInt(CI);
        try {
            return new VtaSchedule(c.getInt(ROWS), c.getInt(CO), ci >= inBlocks() ? VtaSchedule.ALL : ci, c.getInt(VT));
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigException(layer.name() + ": " + c.toJson() + " is not a schedule: " + e.getMessage());
        }
    }

    /**
     * The input every measurement of this workload runs on: seeded by the workload key, so every agent and every run
     * feeds the same values (the cycle model does not depend on them; the bit-exact check does).
     */
    public NDArray input() {
        long seed = Long.parseLong(Sha256.hex(key().getBytes(StandardCharsets.UTF_8)).substring(0, 15), 16);
        Random r = new Random(seed);
        int[] shape = layer.inputShape();
        long[] v = new long[NDArray.elementCount(layer.inputDtype(), shape)];
        boolean unsigned = layer.inputDtype().equals(DType.UINT8);
        for (int i = 0; i < v.length; i++) v[i] = unsigned ? r.nextInt(256) : r.nextInt(256) - 128;
        return NDArray.fromLongs(layer.inputDtype(), shape, v);
    }

    /** The CPU int8 result on {@code input}: the interpreter running the layer's Relay region. */
    public NDArray expected(NDArray input) {
        return ((TensorValue) Interpreter.runMain(IRModule.fromMain(reference), input)).data();
    }
}
