package dev.relayfarm.ops.registry;

import dev.relayfarm.ops.ElementwiseOps;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.ReductionOps;
import dev.relayfarm.ops.algorithm.AlgorithmOps;
import dev.relayfarm.ops.image.ImageOps;
import dev.relayfarm.ops.nn.NnOps;
import dev.relayfarm.ops.strings.StringOps;
import dev.relayfarm.ops.transform.TransformOps;
import dev.relayfarm.ops.vision.VisionOps;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * All operators, built once in code (no classpath scanning); a duplicate name fails fast. Each family of operators
 * lists its definitions in its own class; this registry sits above the families (it imports them, they never import
 * it), so an operator's definition depends only on the operator API in {@code dev.relayfarm.ops}.
 */
public final class OpRegistry {
    private static final Map<String, OpDef<?>> OPS = build();

    private OpRegistry() {}

    private static Map<String, OpDef<?>> build() {
        Map<String, OpDef<?>> ops = new LinkedHashMap<>();
        for (List<OpDef<?>> family : List.of(ElementwiseOps.defs(), ReductionOps.defs(), TransformOps.defs(), NnOps.defs(), ImageOps.defs(),
                AlgorithmOps.defs(), VisionOps.defs(), StringOps.defs())) {
            for (OpDef<?> def : family) {
                if (ops.putIfAbsent(def.name(), def) != null) throw new IllegalStateException("operator " + def.name() + " registered twice");
            }
        }
        return Collections.unmodifiableMap(ops);
    }

    public static Optional<OpDef<?>> find(String name) {
        return Optional.ofNullable(OPS.get(name));
    }

    /** The operator named {@code name}; throws naming it when unknown. */
    public static OpDef<?> get(String name) {
        OpDef<?> def = OPS.get(name);
        if (def == null) throw new IllegalArgumentException("unknown operator '" + name + "'");
        return def;
    }

    public static Collection<OpDef<?>> all() {
        return OPS.values();
    }
}
