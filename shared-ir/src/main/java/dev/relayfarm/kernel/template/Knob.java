package dev.relayfarm.kernel.template;

import java.util.List;

/**
 * One tunable decision of a schedule template (a tile size, an unroll switch, a loop order) and the
 * candidate values it may take for the workload at hand. Values are {@link Integer}s or
 * {@link String}s (a loop order is a named choice), so a configuration is plain JSON.
 */
public record Knob(String name, List<Object> candidates, String doc) {
    public Knob {
        candidates = List.copyOf(candidates);
        if (candidates.isEmpty()) throw new IllegalArgumentException("knob " + name + " has no candidate values");
        for (Object c : candidates) {
            if (!(c instanceof Integer) && !(c instanceof String)) {
                throw new IllegalArgumentException("knob " + name + ": candidates must be integers or strings, got " + c.getClass().getSimpleName());
            }
        }
    }

    public static Knob ints(String name, List<Integer> values, String doc) {
        return new Knob(name, List.copyOf(values), doc);
    }

    public static Knob choices(String name, List<String> values, String doc) {
        return new Knob(name, List.copyOf(values), doc);
    }
}
