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
 */
public record VtaModelReport(boolean bitExact, List<ScheduleSearch.Outcome> layers) {
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
        return new VtaModelReport(sameTensors(cpu, hetero.value()), layers);
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
        }
        s.append(String.format("offloaded layers %d, cycles default %d, searched %d; bit-exact with the CPU int8 result: %s%n", layers.size(),
                defaultCycles(), bestCycles(), bitExact ? "yes" : "NO"));
        return s.toString();
    }
}
