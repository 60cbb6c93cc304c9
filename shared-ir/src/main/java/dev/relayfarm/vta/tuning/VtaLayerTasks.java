package dev.relayfarm.vta.tuning;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.VtaPartition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The VTA tuning tasks of a realized quantized module: one per distinct workload key among the layers
 * {@link VtaPartition} offloads (the first layer with that key stands for the others: they share cycles under every
 * schedule), in the order the layers run.
 */
public final class VtaLayerTasks {
    private VtaLayerTasks() {
    }

    public static List<VtaLayerTask> of(IRModule quantized, VtaConfig config) {
        VtaPartition.Result p = VtaPartition.partition(quantized);
        Map<String, VtaLayerTask> byKey = new LinkedHashMap<>();
        for (int i = 0; i < p.layers().size(); i++) {
            VtaLayerTask t = new VtaLayerTask(p.layers().get(i), p.references().get(i), config);
            byKey.putIfAbsent(t.key(), t);
        }
        return new ArrayList<>(byKey.values());
    }

    /** How many offloaded layers of {@code quantized} each workload key stands for (its weight in a model's cycles). */
    public static Map<String, Integer> callsPerWorkload(IRModule quantized) {
        Map<String, Integer> calls = new LinkedHashMap<>();
        for (var layer : VtaPartition.partition(quantized).layers()) calls.merge(VtaLayerTask.workloadKey(layer), 1, Integer::sum);
        return calls;
    }

    /** The task of workload {@code key} in {@code quantized}; empty when no offloaded layer has it. */
    public static Optional<VtaLayerTask> find(IRModule quantized, VtaConfig config, String key) {
        return of(quantized, config).stream().filter(t -> t.key().equals(key)).findFirst();
    }
}
