package dev.relayfarm.tuning.record;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * One measurement of one config of a workload, with everything needed to trust it later: what was measured
 * ({@code workloadKey}, {@code config}), where and with what ({@link RecordContext}: target, device, compiler,
 * RelayFarm version), what it gave ({@link Measurement.Outcome}: a cost or a typed error), the template default's cost
 * measured in the same batch on the same device ({@code defaultCostUs}, empty when the batch had no default or it
 * failed) and when. One JSON line each in a records file ({@link RecordFile}), one row each in the farm's
 * {@code tuning_records} table; the JSON fields are the table's columns:
 * <pre>
 * {"workload_key":"dense[...]","template":"dense_pack.x86","config":{"template":"dense_pack.x86","knobs":{"tile_x":8}},
 *  "target":"c -mcpu=native","device_class":"cpu-x86_64-avx512-2c-3f9a2b1c",
 *  "hardware":{"arch":"x86_64","model":"AMD EPYC","isa":["avx","avx2",...],"cores":2},
 *  "compiler":"gcc (Ubuntu 13.3.0) 13.3.0","relayfarm_version":"0.1.0",
 *  "cost_us":12.5,"cv":0.013,"number":200,"repeat":5,"default_cost_us":15.25,"measured_at":"2025-01-01T10:00:00.123456Z"}
 * </pre>
 * A failure has {@code "error"} (COMPILE_ERROR, RUNTIME_ERROR, WRONG_ANSWER, TIMEOUT) and {@code "error_detail"}
 * instead of the cost fields. {@code template} repeats the config's (a column to filter by). Unknown fields are
 * ignored on reading (the farm adds its ids), a non-finite {@code cv} is written as null. Writing then reading gives
 * an equal record.
 */
public record TuningRecord(String workloadKey, ScheduleConfig config, String target, Device device, String compiler, String relayfarmVersion,
                           Measurement.Outcome outcome, OptionalDouble defaultCostUs, Instant measuredAt) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public TuningRecord {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(compiler, "compiler");
        Objects.requireNonNull(relayfarmVersion, "relayfarmVersion");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(defaultCostUs, "defaultCostUs");
        Objects.requireNonNull(measuredAt, "measuredAt");
        if (outcome instanceof Measurement.Cost c && !(c.medianUs() >= 0 && Double.isFinite(c.medianUs()))) {
            throw new IllegalArgumentException("a cost is a finite number of microseconds, got " + c.medianUs());
        }
        if (outcome instanceof Measurement.Failure f) Objects.requireNonNull(f.error(), "error");
    }

    /**
     * The record of {@code m} measured in {@code context} at {@code at} (kept to the microsecond, the farm's
     * {@code timestamptz} precision, so a record read back from the table is equal too).
     */
    public static TuningRecord of(Measurement m, RecordContext context, OptionalDouble defaultCostUs, Instant at) {
        return new TuningRecord(m.workloadKey(), m.config(), context.target(), context.device(), context.compiler(), context.relayfarmVersion(),
                m.outcome(), defaultCostUs, at.truncatedTo(ChronoUnit.MICROS));
    }

    /**
     * The records of one batch of one task: each carries the cost of {@code defaultConfig}'s measurement in the same
     * batch (the first one measured with it), or none when the batch did not measure it or it failed. What the tuner
     * appends after each round ({@link RecordFile#append}).
     */
    public static List<TuningRecord> batch(List<Measurement> batch, ScheduleConfig defaultConfig, RecordContext context, Instant at) {
        OptionalDouble defaultCost = OptionalDouble.empty();
        for (Measurement m : batch) {
            if (m.config().equals(defaultConfig)) {
                if (m.ok()) defaultCost = OptionalDouble.of(m.costUs());
                break;
            }
        }
        List<TuningRecord> out = new ArrayList<>();
        for (Measurement m : batch) out.add(of(m, context, defaultCost, at));
        return out;
    }

    public String template() {
        return config.template();
    }

    public String deviceClass() {
        return device.deviceClass();
    }

    public RecordKey key() {
        return new RecordKey(workloadKey, target, device.deviceClass(), compiler);
    }

    public Measurement measurement() {
        return new Measurement(workloadKey, config, outcome);
    }

    public boolean ok() {
        return measurement().ok();
    }

    /** The median cost in µs, or +∞ for a failure. */
    public double costUs() {
        return measurement().costUs();
    }

    /**
     * The least gain over the default a record must show to count as faster: the best of many noisy medians is biased
     * low, so a config that is really as fast as the default (or a little slower) would otherwise pass now and then.
     */
    public static final double MIN_GAIN = 0.02;

    /**
     * Whether it ran, and beat the default measured in its batch by more than the noise: by at least {@link #MIN_GAIN},
     * or twice its own repeats' coefficient of variation when that is larger (a record without that baseline is not).
     */
    public boolean fasterThanDefault() {
        if (!(outcome instanceof Measurement.Cost c) || defaultCostUs.isEmpty()) return false;
        double margin = Math.max(MIN_GAIN, Double.isFinite(c.cv()) ? 2 * c.cv() : MIN_GAIN);
        return c.medianUs() < defaultCostUs.getAsDouble() * (1 - margin);
    }

    /** The JSON line (no newline). */
    public String toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("workload_key", workloadKey);
        n.put("template", config.template());
        n.set("config", tree(config.toJson()));
        n.put("target", target);
        n.put("device_class", device.deviceClass());
        ObjectNode hw = n.putObject("hardware");
        hw.put("arch", device.arch());
        hw.put("model", device.model());
        ArrayNode isa = hw.putArray("isa");
        device.isa().forEach(isa::add);
        hw.put("cores", device.cores());
        n.put("compiler", compiler);
        n.put("relayfarm_version", relayfarmVersion);
        switch (outcome) {
            case Measurement.Cost c -> {
                n.put("cost_us", c.medianUs());
                if (Double.isFinite(c.cv())) n.put("cv", c.cv());
                else n.putNull("cv");
                n.put("number", c.number());
                n.put("repeat", c.repeat());
            }
            case Measurement.Failure f -> {
                n.put("error", f.error().name());
                n.put("error_detail", f.detail());
            }
        }
        if (defaultCostUs.isPresent()) n.put("default_cost_us", defaultCostUs.getAsDouble());
        n.put("measured_at", measuredAt.toString());
        return n.toString();
    }

    /** The record a JSON line holds; an {@link IllegalArgumentException} says what is wrong with it. */
    public static TuningRecord fromJson(String line) {
        JsonNode n;
        try {
            n = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
        }
        return fromJson(n);
    }

    /** The record a parsed JSON line holds. */
    public static TuningRecord fromJson(JsonNode n) {
        if (!n.isObject()) throw new IllegalArgumentException("a tuning record is a JSON object, got " + n.getNodeType());
        ScheduleConfig config = ScheduleConfig.fromJson(required(n, "config").toString());
        if (n.hasNonNull("template") && !n.get("template").asText().equals(config.template())) {
            throw new IllegalArgumentException("\"template\" is " + n.get("template") + " but the config's is \"" + config.template() + "\"");
        }
        JsonNode hw = required(n, "hardware");
        List<String> isa = new ArrayList<>();
        for (JsonNode f : required(hw, "isa")) isa.add(f.asText());
        Device device = new Device(text(n, "device_class"), text(hw, "arch"), text(hw, "model"), isa, integer(hw, "cores"));
        boolean cost = n.hasNonNull("cost_us"), error = n.hasNonNull("error");
        if (cost == error) throw new IllegalArgumentException("a tuning record has \"cost_us\" or \"error\", exactly one");
        Measurement.Outcome outcome;
        if (cost) {
            double cv = n.hasNonNull("cv") ? number(n, "cv") : Double.NaN;
            outcome = new Measurement.Cost(number(n, "cost_us"), cv, integer(n, "number"), integer(n, "repeat"));
        } else {
            String e = text(n, "error");
            MeasureError kind;
            try {
                kind = MeasureError.valueOf(e.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException x) {
                throw new IllegalArgumentException("\"error\" must be COMPILE_ERROR, RUNTIME_ERROR, WRONG_ANSWER or TIMEOUT, got \"" + e + "\"");
            }
            outcome = new Measurement.Failure(kind, n.hasNonNull("error_detail") ? n.get("error_detail").asText() : null);
        }
        OptionalDouble defaultCost = n.hasNonNull("default_cost_us") ? OptionalDouble.of(number(n, "default_cost_us")) : OptionalDouble.empty();
        Instant at;
        try {
            at = Instant.parse(text(n, "measured_at"));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("\"measured_at\" must be an ISO-8601 instant (2025-01-01T10:00:00Z), got " + n.get("measured_at"));
        }
        return new TuningRecord(text(n, "workload_key"), config, text(n, "target"), device, text(n, "compiler"), text(n, "relayfarm_version"),
                outcome, defaultCost, at);
    }

    private static JsonNode required(JsonNode n, String field) {
        if (!n.hasNonNull(field)) throw new IllegalArgumentException("a tuning record needs \"" + field + "\"");
        return n.get(field);
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = required(n, field);
        if (!v.isTextual()) throw new IllegalArgumentException("\"" + field + "\" must be a string, got " + v);
        return v.asText();
    }

    private static double number(JsonNode n, String field) {
        JsonNode v = required(n, field);
        if (!v.isNumber()) throw new IllegalArgumentException("\"" + field + "\" must be a number, got " + v);
        return v.asDouble();
    }

    private static int integer(JsonNode n, String field) {
        JsonNode v = required(n, field);
        if (!v.canConvertToInt() || !v.isIntegralNumber()) throw new IllegalArgumentException("\"" + field + "\" must be an integer, got " + v);
        return v.asInt();
    }

    private static JsonNode tree(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a schedule config is plain JSON", e);
        }
    }
}
