package dev.relayfarm.compile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads schedule configs from a JSON-lines tuning log: one object per line with {@code "workload"}
 * (the kernel's tuning key) and {@code "config"} ({@code {"template":...,"knobs":{...}}}), and
 * optionally {@code "cost"} (seconds). Per workload the lowest cost wins, else the last line.
 * Blank lines and lines starting with {@code #} are skipped; a malformed line is an error naming
 * file:line.
 */
public final class ScheduleLog {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ScheduleLog() {}

    public static Map<String, ScheduleConfig> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        Map<String, ScheduleConfig> best = new HashMap<>();
        Map<String, Double> bestCost = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String where = file + ":" + (i + 1);
            JsonNode n;
            try {
                n = JSON.readTree(line);
            } catch (IOException e) {
                throw new ArtifactException(where + ": not JSON: " + e.getMessage());
            }
            if (!n.hasNonNull("workload") || !n.hasNonNull("config")) throw new ArtifactException(where + ": a schedule line needs \"workload\" and \"config\"");
            String workload = n.get("workload").asText();
            ScheduleConfig config;
            try {
                config = ScheduleConfig.fromJson(n.get("config").toString());
            } catch (IllegalArgumentException e) {
                throw new ArtifactException(where + ": " + e.getMessage());
            }
            double cost = n.hasNonNull("cost") ? n.get("cost").asDouble() : Double.NaN;
            Double prev = bestCost.get(workload);
            if (prev == null || Double.isNaN(cost) || Double.isNaN(prev) || cost <= prev) {
                best.put(workload, config);
                bestCost.put(workload, cost);
            }
        }
        return best;
    }
}
