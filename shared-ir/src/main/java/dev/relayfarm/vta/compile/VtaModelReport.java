package dev.relayfarm.vta.compile;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * A realized quantized model run with its offloadable layers on the accelerator SIMULATOR (default schedules) and
 * the rest in the interpreter, checked against the all-CPU interpreter, with each offloaded layer's report and,
 * when asked, the best schedule of a grid search on the activation the layer really read.
 *
 * @param bitExact whether the heterogeneous result equals the CPU int8 result bit for bit
 * @param layers   per offloaded call: the default schedule's report, and the searched best (the same when not searched)
 *                 or the applied schedule's (tried 1)
 * @param bytesToAccelerator bytes the run's {@code device_copy}s moved from the host to the accelerator
 * @param bytesToHost        and back
 */
public record VtaModelReport(boolean bitExact, List<ScheduleSearch.Outcome> layers, long bytesToAccelerator, long bytesToHost) {
    public VtaModelReport {
        layers = List.copyOf(layers);
    }

    public static VtaModelReport measure(IRModule quantized, VtaConfig config, boolean search, NDArray... inputs) {
        OffloadedModule off = OffloadedModule.compile(quantized, config, l -> VtaScheduleSpace.defaultSchedule(l, config));
        OffloadedModule.Result hetero = off.run(inputs);
        Value cpu = Interpreter.runMain(quantized, inputs);
        List<ScheduleSearch.Outcome> layers = new ArrayList<>();
        for (OffloadedModule.LayerCall call : hetero.calls()) {
            LayerReport byDefault = LayerReport.of(call.layer(), call.stats());
            layers.add(search ? ScheduleSearch.search(call.layer().layer(), config, call.input()) : new ScheduleSearch.Outcome(byDefault, byDefault, 1));
        }
        return new VtaModelReport(sameTensors(cpu, hetero.value()), layers, hetero.bytesToAccelerator(), hetero.bytesToHost());
    }

    /**
     * The model run with each offloaded layer under the schedule {@code schedules} picks (stored tuning records, say),
     * checked against the all-CPU interpreter; per layer the picked schedule's report as the best and the default's,
     * run on the same activation, beside it.
     */
    public static VtaModelReport measure(IRModule quantized, VtaConfig config, java.util.function.Function<QuantizedLayer, VtaSchedule> schedules,
            NDArray... inputs) {
        OffloadedModule off = OffloadedModule.compile(quantized, config, schedules);
        OffloadedModule.Result hetero = off.run(inputs);
        Value cpu = Interpreter.runMain(quantized, inputs);
        List<ScheduleSearch.Outcome> layers = new ArrayList<>();
        for (OffloadedModule.LayerCall call : hetero.calls()) {
            QuantizedLayer layer = call.layer().layer();
            LayerReport picked = LayerReport.of(call.layer(), call.stats());
            VtaSchedule byDefault = VtaScheduleSpace.defaultSchedule(layer, config);
            LayerReport defaults = picked;
            if (!byDefault.equals(call.layer().schedule())) {
                LoweredLayer lowered = LayerLowering.lower(layer, byDefault, config);
                defaults = LayerReport.of(lowered, lowered.run(call.input()).stats());
            }
            layers.add(new ScheduleSearch.Outcome(picked, defaults, 1));
        }
        return new VtaModelReport(sameTensors(cpu, hetero.value()), layers, hetero.bytesToAccelerator(), hetero.bytesToHost());
    }

    private static boolean sameTensors(Value a, Value b) {
        return a instanceof TensorValue x && b instanceof TensorValue y ? x.data().contentEquals(y.data()) : a.equals(b);
    }

    public long defaultCycles() {
        return layers.stream().mapToLong(o -> o.defaults().cycles()).sum();
    }

    public long bestCycles() {
        return layers.stream().mapToLong(o -> o.best().cycles()).sum();
    }

    /** The table: per layer the default schedule's row, then the searched best's when it differs in schedule. */
    public String table() {
        StringBuilder s = new StringBuilder(LayerReport.header()).append('\n');
        for (ScheduleSearch.Outcome o : layers) {
            s.append(o.defaults().row()).append("  default\n");
            if (o.tried() > 1) s.append(o.best().row()).append("  best of ").append(o.tried()).append('\n');
            else if (!o.best().schedule().equals(o.defaults().schedule())) s.append(o.best().row()).append("  applied\n");
        }
        s.append(String.format("offloaded layers %d, cycles default %d, searched %d; bit-exact with the CPU int8 result: %s%n", layers.size(),
                defaultCycles(), bestCycles(), bitExact ? "yes" : "NO"));
        s.append(String.format("device_copy: %d bytes host -> accelerator, %d bytes accelerator -> host%n", bytesToAccelerator, bytesToHost));
        return s.toString();
    }
}
