package dev.relayfarm.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The schedules file of {@code relayc compile --schedules}: the farm row's fields, and the older tuning-log lines. */
class ScheduleLogTest {
    private static final Target V3 = Target.parse("c -mcpu=x86-64-v3");
    private static final String HERE = "cpu-x86_64-avx2-8c-00000000";
    private static final ScheduleConfig CONFIG = new ScheduleConfig("dense_pack.x86", Map.of("tile_x", 8, "tile_y", 1, "tile_k", 1));

    private static List<StoredSchedule> read(Path tmp, String text) throws Exception {
        Path f = tmp.resolve("s.jsonl");
        Files.writeString(f, text);
        return ScheduleLog.read(f, V3, HERE);
    }

    @Test
    void aLineSaysWhatAFarmRowSays(@TempDir Path tmp) throws Exception {
        List<StoredSchedule> s = read(tmp, "# reviewed\n\n{\"workload\": \"w\", \"config\": " + CONFIG.toJson()
                + ", \"status\": \"pinned\", \"target\": \"c  -mcpu=x86-64-v4\", \"device_class\": \"cpu-aarch64-sve-4c-12345678\", \"cost_us\": 41.5, \"default_cost_us\": 52}\n");
        assertEquals(List.of(new StoredSchedule(3, "w", "c -mcpu=x86-64-v4", "cpu-aarch64-sve-4c-12345678", CONFIG, ScheduleStatus.PINNED, OptionalDouble.of(41.5), OptionalDouble.of(52))), s);
    }

    @Test
    void anOlderTuningLogLineIsAnApprovedScheduleForTheTargetCompiledFor(@TempDir Path tmp) throws Exception {
        List<StoredSchedule> s = read(tmp, "{\"workload\": \"w\", \"config\": " + CONFIG.toJson() + ", \"cost\": 0.000025}\n"
                + "{\"workload\": \"v\", \"config\": " + CONFIG.toJson() + "}\n");
        assertEquals(2, s.size());
        assertEquals(new StoredSchedule(1, "w", V3.toString(), HERE, CONFIG, ScheduleStatus.APPROVED, OptionalDouble.of(25.0), OptionalDouble.empty()),
                new StoredSchedule(s.get(0).id(), s.get(0).workloadKey(), s.get(0).target(), s.get(0).deviceClass(), s.get(0).config(), s.get(0).status(),
                        OptionalDouble.of(Math.round(s.get(0).costUs().getAsDouble() * 1e6) / 1e6), s.get(0).defaultCostUs()));
        assertEquals(OptionalDouble.empty(), s.get(1).costUs());
    }

    @Test
    void aMalformedLineNamesFileAndLine(@TempDir Path tmp) {
        for (String[] c : new String[][] {
                {"{\"workload\": \"w\"}", "needs \"workload\" and \"config\""},
                {"{\"workload\": \"w\", \"config\": " + CONFIG.toJson() + ", \"status\": \"liked\"}", "status must be pending, approved, rejected or pinned, got \"liked\""},
                {"{\"workload\": \"w\", \"config\": " + CONFIG.toJson() + ", \"target\": \"cuda\"}", "unknown target kind 'cuda'"},
                {"{\"workload\": \"w\", \"config\": " + CONFIG.toJson() + ", \"cost\": 1, \"cost_us\": 2}", "not both"},
                {"{\"workload\": \"w\", \"config\": " + CONFIG.toJson() + ", \"cost_us\": \"fast\"}", "\"cost_us\" must be a number"},
                {"not json", "not JSON"}}) {
            String msg = assertThrows(ScheduleFileException.class, () -> read(tmp, "\n" + c[0] + "\n")).getMessage();
            assertTrue(msg.contains("s.jsonl:2: ") && msg.contains(c[1]), msg);
        }
    }
}
