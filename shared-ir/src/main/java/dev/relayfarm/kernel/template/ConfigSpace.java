package dev.relayfarm.kernel.template;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * The cross product of a template's knobs for one workload: enumerable by index (mixed radix, the
 * first knob varying slowest), so a tuner can sample, enumerate or resume by number. A configuration
 * of the space leaves each {@link Knob#optional() optional} knob out when it has the value absence
 * means (one spelling per point, the one stored before the knob existed); {@link #complete} spells
 * every knob out for the template that reads them.
 */
public record ConfigSpace(String template, List<Knob> knobs) {
    public ConfigSpace {
        knobs = List.copyOf(knobs);
        java.util.Set<String> names = new java.util.HashSet<>();
        for (Knob k : knobs) if (!names.add(k.name())) throw new IllegalArgumentException(template + ": two knobs named " + k.name());
    }

    public long size() {
        long n = 1;
        for (Knob k : knobs) n = Math.multiplyExact(n, k.candidates().size());
        return n;
    }

    /** Configuration number {@code index} in {@code [0, size())}. */
    public ScheduleConfig get(long index) {
        if (index < 0 || index >= size()) throw new IndexOutOfBoundsException(template + ": config index " + index + " not in [0, " + size() + ")");
        Map<String, Object> values = new LinkedHashMap<>();
        long rest = index;
        for (int i = knobs.size() - 1; i >= 0; i--) {
            Knob k = knobs.get(i);
            int n = k.candidates().size();
            Object v = k.candidates().get((int) (rest % n));
            if (!v.equals(k.absentAs())) values.put(k.name(), v);
            rest /= n;
        }
        return new ScheduleConfig(template, values);
    }

    /** The index of {@code config}, or an {@link InvalidConfigException} naming the first knob value outside the space. */
    public long indexOf(ScheduleConfig config) {
        check(config);
        long index = 0;
        for (Knob k : knobs) index = index * k.candidates().size() + k.candidates().indexOf(value(config, k));
        return index;
    }

    /** {@code config} (a point of this space, see {@link #check}) with every optional knob it leaves out set to what absence means. */
    public ScheduleConfig complete(ScheduleConfig config) {
        check(config);
        Map<String, Object> values = new LinkedHashMap<>(config.knobs());
        for (Knob k : knobs) values.putIfAbsent(k.name(), k.absentAs());
        return new ScheduleConfig(template, values);
    }

    private static Object value(ScheduleConfig config, Knob k) {
        Object v = config.knobs().get(k.name());
        return v == null ? k.absentAs() : v;
    }

    public Stream<ScheduleConfig> all() {
        return LongStream.range(0, size()).mapToObj(this::get);
    }

    public Knob knob(String name) {
        for (Knob k : knobs) if (k.name().equals(name)) return k;
        throw new IllegalArgumentException(template + " has no knob " + name);
    }

    /** Rejects a configuration of a template other than {@code template}. */
    public static void requireTemplate(ScheduleConfig config, String template) {
        if (!config.template().equals(template)) {
            throw new InvalidConfigException("config is for template " + config.template() + ", not " + template);
        }
    }

    /**
     * Rejects a value of integer knob {@code knob} that is not a positive divisor of {@code extent}
     * ({@code what} names it, e.g. "the output width "); an absent or non-integer value is left to
     * {@link #check}.
     */
    static void requireDivisor(ScheduleConfig config, String knob, String what, int extent, String workload) {
        if (config.knobs().get(knob) instanceof Integer v && (v < 1 || extent % v != 0)) {
            throw new InvalidConfigException(config.template() + ": " + knob + "=" + v + " must be a positive divisor of " + what + extent + " (" + workload + ")");
        }
    }

    /** Whether {@link #check} accepts {@code config}. */
    public boolean contains(ScheduleConfig config) {
        try {
            check(config);
            return true;
        } catch (InvalidConfigException e) {
            return false;
        }
    }

    /**
     * Rejects a configuration of another template, with missing (required) or unknown knobs, or with a
     * value that is not a candidate of its knob for this workload.
     */
    public void check(ScheduleConfig config) {
        requireTemplate(config, template);
        List<String> unknown = new ArrayList<>(config.knobs().keySet());
        for (Knob k : knobs) {
            unknown.remove(k.name());
            Object v = value(config, k);
            if (v == null) throw new InvalidConfigException(template + ": config has no value for knob " + k.name() + " (" + k.doc() + ")");
            if (!k.candidates().contains(v)) {
                throw new InvalidConfigException(template + ": knob " + k.name() + "=" + v + " is not valid for this workload (candidates " + k.candidates() + "; " + k.doc() + ")");
            }
        }
        if (!unknown.isEmpty()) throw new InvalidConfigException(template + ": unknown knobs " + unknown + " (knobs: " + knobs.stream().map(Knob::name).toList() + ")");
    }
}
