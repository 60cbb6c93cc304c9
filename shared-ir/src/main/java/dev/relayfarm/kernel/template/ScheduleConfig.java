package dev.relayfarm.kernel.template;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;

/**
 * One point of a template's configuration space: the template's name and a value per knob. Plain
 * data, serializable to and from JSON (what a tuning log stores), e.g.
 * <pre>
 * {"template":"conv2d_NCHWc.x86","knobs":{"reg_n":13,"unroll_kw":1}}
 * </pre>
 * Knob values are integers or strings. A configuration says nothing about the shape: whether it fits
 * one is decided by {@link ScheduleTemplate#validate}.
 */
public record ScheduleConfig(String template, Map<String, Object> knobs) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public ScheduleConfig {
        // sorted, so equal configurations print (and hash into tuning logs) identically
        knobs = java.util.Collections.unmodifiableMap(new TreeMap<>(knobs));
        for (Map.Entry<String, Object> e : knobs.entrySet()) {
            if (!(e.getValue() instanceof Integer) && !(e.getValue() instanceof String)) {
                throw new IllegalArgumentException("config of " + template + ": knob " + e.getKey() + " must be an integer or a string, got " + e.getValue());
            }
        }
    }

    public int getInt(String knob) {
        Object v = knobs.get(knob);
        if (!(v instanceof Integer i)) throw new InvalidConfigException(template + ": knob " + knob + " must be an integer, got " + v);
        return i;
    }

    public String getString(String knob) {
        Object v = knobs.get(knob);
        if (!(v instanceof String s)) throw new InvalidConfigException(template + ": knob " + knob + " must be a string, got " + v);
        return s;
    }

    public ScheduleConfig with(String knob, Object value) {
        Map<String, Object> m = new TreeMap<>(knobs);
        m.put(knob, value);
        return new ScheduleConfig(template, m);
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a config is plain data and always serializes", e);
        }
    }

    public static ScheduleConfig fromJson(String json) {
        try {
            ScheduleConfig c = JSON.readValue(json, ScheduleConfig.class);
            if (c.template() == null || c.knobs() == null) throw new IllegalArgumentException("not a schedule config (needs \"template\" and \"knobs\"): " + json);
            return c;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a schedule config: " + e.getOriginalMessage(), e);
        }
    }
}
