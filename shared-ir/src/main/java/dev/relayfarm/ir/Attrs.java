package dev.relayfarm.ir;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Keyword attributes in the order they were written: {@code padding=[1, 1], channels=16}.
 * Immutable; compares structurally.
 */
public record Attrs(Map<String, AttrValue> values) {
    public static final Attrs EMPTY = new Attrs(Map.of());

    public Attrs {
        values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    public Optional<AttrValue> get(String key) {
        return Optional.ofNullable(values.get(key));
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    /** A copy with {@code key} set (appended if new, replaced in place if present). */
    public Attrs with(String key, AttrValue value) {
        LinkedHashMap<String, AttrValue> m = new LinkedHashMap<>(values);
        m.put(key, value);
        return new Attrs(m);
    }

    public Attrs without(String key) {
        LinkedHashMap<String, AttrValue> m = new LinkedHashMap<>(values);
        m.remove(key);
        return new Attrs(m);
    }

    public static Attrs of(String key, AttrValue value) {
        return EMPTY.with(key, value);
    }
}
