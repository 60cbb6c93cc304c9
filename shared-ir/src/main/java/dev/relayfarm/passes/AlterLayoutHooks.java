package dev.relayfarm.passes;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Layout hooks keyed by operator name: what a target fills in for {@link AlterOpLayout}. A second
 * hook for the same operator fails fast.
 */
public record AlterLayoutHooks(Map<String, AlterLayoutHook> byOp) {
    public AlterLayoutHooks {
        byOp = Collections.unmodifiableMap(new LinkedHashMap<>(byOp));
    }

    public static AlterLayoutHooks none() {
        return new AlterLayoutHooks(Map.of());
    }

    /** These hooks plus {@code hook} for {@code op}. */
    public AlterLayoutHooks with(String op, AlterLayoutHook hook) {
        if (byOp.containsKey(op)) throw new IllegalArgumentException("two layout hooks for " + op);
        LinkedHashMap<String, AlterLayoutHook> m = new LinkedHashMap<>(byOp);
        m.put(op, hook);
        return new AlterLayoutHooks(m);
    }

    public Optional<AlterLayoutHook> find(String op) {
        return Optional.ofNullable(byOp.get(op));
    }
}
