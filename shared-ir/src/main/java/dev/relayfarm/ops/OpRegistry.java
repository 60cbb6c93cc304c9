package dev.relayfarm.ops;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * All operators, built once in code (no classpath scanning); a duplicate name fails fast.
 * Each family of operators registers itself in its own class.
 */
public final class OpRegistry {
    private static final Map<String, OpDef<?>> OPS = build();

    private OpRegistry() {}

    /** Collects registrations; rejects a second operator with the same name. */
    public static final class Builder {
        private final Map<String, OpDef<?>> ops = new LinkedHashMap<>();

        public <A> void add(OpDef<A> def) {
            if (ops.putIfAbsent(def.name(), def) != null) {
                throw new IllegalStateException("operator " + def.name() + " registered twice");
            }
        }
    }

    private static Map<String, OpDef<?>> build() {
        Builder b = new Builder();
        ElementwiseOps.register(b);
        ReductionOps.register(b);
        TransformOps.register(b);
        NnOps.register(b);
        ImageOps.register(b);
        AlgorithmOps.register(b);
        MiscOps.register(b);
        return Collections.unmodifiableMap(b.ops);
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
