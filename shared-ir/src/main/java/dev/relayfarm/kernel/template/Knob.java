package dev.relayfarm.kernel.template;

import java.util.List;

/**
 * One tunable decision of a schedule template (a tile size, an unroll switch, a loop order) and the
 * candidate values it may take for the workload at hand. Values are {@link Integer}s or
 * {@link String}s (a loop order is a named choice), so a configuration is plain JSON.
 *
 * <p>A knob added to a template after configurations of it were stored (in tuning records, in
 * artifacts' manifests) is <em>optional</em>: {@code absentAs} is the candidate that reproduces the
 * schedule the template built before the knob existed, and a configuration that leaves the knob out
 * means that value. So stored configurations keep their meaning, and the default configuration (which
 * leaves it out) stays byte-for-byte what it was. {@code absentAs} is null for a required knob.
 */
public record Knob(String name, List<Object> candidates, String doc, Object absentAs) {
    public Knob {
        candidates = List.copyOf(candidates);
        if (candidates.isEmpty()) throw new IllegalArgumentException("knob " + name + " has no candidate values");
        for (Object c : candidates) {
            if (!(c instanceof Integer) && !(c instanceof String)) {
                throw new IllegalArgumentException("knob " + name + ": candidates must be integers or strings, got " + c.getClass().getSimpleName());
            }
        }
        if (absentAs != null && !candidates.contains(absentAs)) {
            throw new IllegalArgumentException("knob " + name + ": the value an absent knob means, " + absentAs + ", is not a candidate " + candidates);
        }
    }

    /** A required knob. */
    public Knob(String name, List<Object> candidates, String doc) {
        this(name, candidates, doc, null);
    }

    /** This knob made optional: a configuration without it means {@code value}. */
    public Knob absentMeans(Object value) {
        return new Knob(name, candidates, doc, value);
    }

    public boolean optional() {
        return absentAs != null;
    }

    public static Knob ints(String name, List<Integer> values, String doc) {
        return new Knob(name, List.copyOf(values), doc);
    }

    public static Knob choices(String name, List<String> values, String doc) {
        return new Knob(name, List.copyOf(values), doc);
    }
}
