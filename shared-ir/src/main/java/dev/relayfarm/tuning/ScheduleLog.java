package dev.relayfarm.tuning;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * Reads a schedules file ({@code relayc compile --schedules}): JSON lines, one stored schedule each, with what
 * a row of the farm's {@code schedules} table says, so {@link ScheduleRule} decides for both alike:
 * <pre>
 * {"workload": "dense(...)", "config": {"template": "dense_pack.x86", "knobs": {...}},
 *  "status": "approved", "target": "c -mcpu=x86-64-v3", "device_class": "cpu-x86_64-avx2-8c-1a2b3c4d",
 *  "cost_us": 41.5, "default_cost_us": 52.0}
 * </pre>
 * {@code workload} and {@code config} are required. {@code status} (pending, approved, rejected, pinned) defaults
 * to approved: a line of a tuning log someone passes is theirs to apply. {@code target} (the target the schedule
 * was tuned and measured for) defaults to the target compiled for, {@code device_class} (the {@link Device} both
 * costs were measured on) to the device class compiled for. {@code cost_us} is the schedule's measured cost,
 * {@code default_cost_us} its template default's on the same device; the older {@code cost} (seconds) still reads
 * as the schedule's cost. Blank lines and lines starting with {@code #} are skipped; a malformed line is an
 * {@link ScheduleFileException} naming file:line.
 */
public final class ScheduleLog {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ScheduleLog() {}

    /**
     * The file's schedules in line order (each line's number as its id); lines without a target are for {@code target},
     * lines without a device class for {@code deviceClass}.
     */
    public static List<StoredSchedule> read(Path file, Target target, String deviceClass) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<StoredSchedule> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String where = file + ":" + (i + 1);
            try {
                out.add(parse(JSON.readTree(line), i + 1, target, deviceClass));
            } catch (IOException e) {
                throw new ScheduleFileException(where + ": not JSON: " + e.getMessage());
            } catch (IllegalArgumentException e) { // a bad config, status or target (TargetException)
                throw new ScheduleFileException(where + ": " + e.getMessage());
            }
        }
        return out;
    }

    /**
     * One line's schedule, {@code number} its id; an {@link IllegalArgumentException} says what is wrong with it (the
     * caller names file:line). Public for the readers of files that mix these lines with tuning records.
     */
    public static StoredSchedule parse(JsonNode n, int number, Target target, String deviceClass) {
        if (!n.hasNonNull("workload") || !n.hasNonNull("config")) throw new IllegalArgumentException("a schedule line needs \"workload\" and \"config\"");
        ScheduleConfig config = ScheduleConfig.fromJson(n.get("config").toString());
        ScheduleStatus status = ScheduleStatus.APPROVED;
        if (n.hasNonNull("status")) {
            String s = n.get("status").asText();
            try {
                status = ScheduleStatus.valueOf(s.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("status must be pending, approved, rejected or pinned, got \"" + s + "\"");
            }
        }
        String lineTarget = n.hasNonNull("target") ? Target.parse(n.get("target").asText()).toString() : target.toString();
        if (n.hasNonNull("cost") && n.hasNonNull("cost_us")) throw new IllegalArgumentException("give \"cost_us\" or the older \"cost\" (seconds), not both");
        OptionalDouble cost = n.hasNonNull("cost_us") ? number(n, "cost_us", 1)
                : n.hasNonNull("cost") ? number(n, "cost", 1e6) : OptionalDouble.empty();
        OptionalDouble defaultCost = n.hasNonNull("default_cost_us") ? number(n, "default_cost_us", 1) : OptionalDouble.empty();
        String lineDevice = n.hasNonNull("device_class") ? n.get("device_class").asText() : deviceClass;
        return new StoredSchedule(number, n.get("workload").asText(), lineTarget, lineDevice, config, status, cost, defaultCost);
    }

    /**
     * {@code s} as one line of this format, with its target and device class written out (so the line means the same in
     * a file compiled for another target) and {@code note} (null: none), which reading ignores: why it was stored.
     */
    public static String line(StoredSchedule s, String note) {
        ObjectNode n = JSON.createObjectNode();
        n.put("workload", s.workloadKey());
        try {
            n.set("config", JSON.readTree(s.config().toJson()));
        } catch (IOException e) {
            throw new IllegalStateException("a config's own JSON does not parse: " + s.config(), e);
        }
        n.put("status", s.status().name().toLowerCase(Locale.ROOT));
        n.put("target", s.target());
        n.put("device_class", s.deviceClass());
        s.costUs().ifPresent(c -> n.put("cost_us", c));
        s.defaultCostUs().ifPresent(c -> n.put("default_cost_us", c));
        if (note != null) n.put("note", note);
        return n.toString();
    }

    private static OptionalDouble number(JsonNode n, String field, double toMicroseconds) {
        if (!n.get(field).isNumber()) throw new IllegalArgumentException("\"" + field + "\" must be a number, got " + n.get(field));
        return OptionalDouble.of(n.get(field).asDouble() * toMicroseconds);
    }
}
