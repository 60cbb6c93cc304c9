package dev.relayfarm.vta.tuning;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.vta.VtaConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated accelerator as tuning records name it, so VTA schedules fit the records format the CPU's use
 * ({@link RecordContext}: target, device, compiler, version):
 *
 * <ul>
 *   <li>device class {@code vta-sim-BATCHxBLOCK_INxBLOCK_OUT}, e.g. {@code vta-sim-1x16x16}: the farm's
 *       {@code measure.requests.<class>} topic and {@code devices.device_class};
 *   <li>target: every parameter the cycle model depends on, e.g.
 *       {@code vta-sim -gemm=1x16x16 -uop=32768 -inp=32768 -wgt=262144 -acc=131072 -dma=8/0 -alu-ii=2 -clock-mhz=100},
 *       so records of two buffer sizes or DMA models are never compared (the class alone names only the GEMM core);
 *   <li>compiler: {@link #LOWERING}, the lowering's version: a changed lowering emits other programs, whose cycles
 *       old records do not describe.
 * </ul>
 *
 * <p>Cost: a record's {@code cost_us} is the SIMULATED cycles at the stated clock ({@link #CLOCK_MHZ}), {@code cv} 0,
 * {@code number} and {@code repeat} 1. Microseconds rather than a new {@code cycles} field because everything that
 * reads records — best per workload, the task scheduler, the farm's {@code tuning_records}, {@code schedules} and
 * dashboard, {@code relayc records} — compares {@code cost_us}; the conversion is exact both ways ({@link #cycles}).
 * 100 MHz is the clock VTA's published PYNQ designs run at, so the microseconds read plausibly, but they remain a
 * simulation: the device's model field says so.
 */
public final class VtaTarget {
    /** The target kind, the first token of every VTA target string. */
    public static final String KIND = "vta-sim";
    /** The clock cycles are converted at: {@code cost_us = cycles / CLOCK_MHZ}. */
    public static final int CLOCK_MHZ = 100;
    /** The "compiler" of VTA records: the lowering ({@code LayerLowering}) and its version. */
    public static final String LOWERING = "relayfarm-vta-lowering-1";
    /** The device classes an agent can simulate: the default configuration's only. */
    public static final List<String> CLASSES = List.of(deviceClass(VtaConfig.defaults()));

    private VtaTarget() {
    }

    public static String deviceClass(VtaConfig c) {
        return KIND + "-" + c.batch() + "x" + c.blockIn() + "x" + c.blockOut();
    }

    /** Whether {@code target} is a VTA target string (else it is a CPU one, {@code c ...}). */
    public static boolean isVta(String target) {
        return target.equals(KIND) || target.startsWith(KIND + " ");
    }

    /** The target string of {@code c}. */
    public static String target(VtaConfig c) {
        return KIND + " -gemm=" + c.batch() + "x" + c.blockIn() + "x" + c.blockOut() + " -uop=" + c.uopBufferBytes() + " -inp=" + c.inputBufferBytes()
                + " -wgt=" + c.weightBufferBytes() + " -acc=" + c.accBufferBytes() + " -dma=" + c.dmaBytesPerCycle() + "/" + c.dmaLatencyCycles()
                + " -alu-ii=" + c.aluInitiationInterval() + " -clock-mhz=" + CLOCK_MHZ;
    }

    /**
     * The configuration a target string describes; every option is required (a record's target must say all the
     * cycle model depends on). Errors name the token and what was expected.
     */
    public static VtaConfig parse(String target) {
        String[] tokens = target.trim().split("\\s+");
        if (!tokens[0].equals(KIND)) throw new IllegalArgumentException("not a VTA target: \"" + target + "\" (expected \"" + KIND + " -gemm=...\")");
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 1; i < tokens.length; i++) {
            int eq = tokens[i].indexOf('=');
            if (!tokens[i].startsWith("-") || eq < 0) throw new IllegalArgumentException("VTA target \"" + target + "\": '" + tokens[i] + "' is not -option=value");
            if (options.put(tokens[i].substring(1, eq), tokens[i].substring(eq + 1)) != null) {
                throw new IllegalArgumentException("VTA target \"" + target + "\": option " + tokens[i].substring(0, eq) + " given twice");
            }
        }
        List<String> known = List.of("gemm", "uop", "inp", "wgt", "acc", "dma", "alu-ii", "clock-mhz");
        for (String k : options.keySet()) {
            if (!known.contains(k)) throw new IllegalArgumentException("VTA target \"" + target + "\": unknown option -" + k + " (options: -" + String.join(", -", known) + ")");
        }
        for (String k : known) {
            if (!options.containsKey(k)) throw new IllegalArgumentException("VTA target \"" + target + "\": option -" + k + " is missing");
        }
        int[] gemm = ints(target, "gemm", options.get("gemm"), "x", 3);
        int[] dma = ints(target, "dma", options.get("dma"), "/", 2);
        int clock = ints(target, "clock-mhz", options.get("clock-mhz"), "/", 1)[0];
        if (clock != CLOCK_MHZ) {
            throw new IllegalArgumentException("VTA target \"" + target + "\": -clock-mhz=" + clock + ", but records convert cycles at " + CLOCK_MHZ + " MHz");
        }
        return new VtaConfig(gemm[0], gemm[1], gemm[2], ints(target, "uop", options.get("uop"), "/", 1)[0], ints(target, "inp", options.get("inp"), "/", 1)[0],
                ints(target, "wgt", options.get("wgt"), "/", 1)[0], ints(target, "acc", options.get("acc"), "/", 1)[0], dma[0], dma[1],
                ints(target, "alu-ii", options.get("alu-ii"), "/", 1)[0]);
    }

    private static int[] ints(String target, String option, String value, String separator, int count) {
        String[] parts = value.split(java.util.regex.Pattern.quote(separator), -1);
        if (parts.length != count) {
            throw new IllegalArgumentException("VTA target \"" + target + "\": -" + option + "=" + value + " needs " + count + " integers separated by '" + separator + "'");
        }
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            try {
                out[i] = Integer.parseInt(parts[i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("VTA target \"" + target + "\": -" + option + "=" + value + ": '" + parts[i] + "' is not an integer");
            }
        }
        return out;
    }

    /** The configuration an agent of {@code deviceClass} simulates; the error lists the classes there are. */
    public static VtaConfig configOf(String deviceClass) {
        if (!CLASSES.contains(deviceClass)) {
            throw new IllegalArgumentException("no simulated VTA of device class '" + deviceClass + "' (classes: " + String.join(", ", CLASSES) + ")");
        }
        return VtaConfig.defaults();
    }

    /** The simulated device, labelled as such: one "core" (the simulator is single-threaded), the GEMM shape as its ISA. */
    public static Device device(VtaConfig c) {
        return new Device(deviceClass(c), "vta", "VTA-style cycle-level SIMULATOR (no board)", List.of("gemm-" + c.batch() + "x" + c.blockIn() + "x" + c.blockOut()), 1);
    }

    /** Where VTA records of {@code c} are measured: its target, its simulated device, the lowering, this RelayFarm. */
    public static RecordContext context(VtaConfig c) {
        return new RecordContext(target(c), device(c), LOWERING, ArtifactCompiler.VERSION);
    }

    /** A record's {@code cost_us} for {@code cycles}. */
    public static double costUs(long cycles) {
        return (double) cycles / CLOCK_MHZ;
    }

    /** The cycles a VTA record's {@code cost_us} stands for (exact: costs are whole cycles over the clock). */
    public static long cycles(double costUs) {
        return Math.round(costUs * CLOCK_MHZ);
    }
}
