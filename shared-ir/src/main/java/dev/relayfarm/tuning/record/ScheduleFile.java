package dev.relayfarm.tuning.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.ScheduleFileException;
import dev.relayfarm.tuning.ScheduleLog;
import dev.relayfarm.tuning.ScheduleRule;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningTask;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The file {@code relayc compile --schedules FILE} reads: stored-schedule lines ({@link ScheduleLog}: a
 * {@code "workload"} field) and tuning-record lines ({@link TuningRecord}: a {@code "workload_key"} field), told
 * apart line by line, so a tuning run's records file, a reviewed schedules file, or both concatenated can be given.
 * Records become schedules by {@link RecordSchedules} (faster than their default, built by the compiler in use);
 * everything then goes through {@link dev.relayfarm.tuning.ScheduleRule}. A bad line is a
 * {@link ScheduleFileException} naming file:line; a torn last line of records (a tuner killed mid-append) is skipped as
 * {@link RecordFile} does.
 */
public final class ScheduleFile {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ScheduleFile() {}

    /**
     * The config per workload of {@code tasks} that the file's schedules and records choose by
     * {@link dev.relayfarm.tuning.ScheduleRule} (workloads without one are absent: they keep their template default), for
     * {@code target} on {@code deviceClass} — or, when that is null, on this machine's class for a native target and
     * {@link Device#UNKNOWN_CLASS} for a cross one — with the C compiler the target builds with.
     */
    public static Map<String, ScheduleConfig> choose(Path file, List<TuningTask> tasks, Target target, String deviceClass) throws IOException {
        String device = deviceClass != null ? deviceClass : target.isCross() ? Device.UNKNOWN_CLASS : Device.local().deviceClass();
        Optional<String> cc = CCompiler.forTarget(target).map(CCompiler::identity);
        return ScheduleRule.configs(tasks, device, read(file, target, device, cc));
    }

    /**
     * The file's schedules for compiling to {@code target} on {@code deviceClass} with the C compiler {@code compiler}
     * (empty when there is none: then no record applies). Schedule lines without a target or device class are for
     * these; ids are line numbers.
     */
    public static List<StoredSchedule> read(Path file, Target target, String deviceClass, Optional<String> compiler) throws IOException {
        String[] lines = Files.readString(file, StandardCharsets.UTF_8).split("\n", -1);
        List<StoredSchedule> out = new ArrayList<>();
        List<TuningRecord> records = new ArrayList<>();
        List<Integer> recordLines = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            try {
                JsonNode n;
                try {
                    n = JSON.readTree(line);
                } catch (IOException e) {
                    throw new IllegalArgumentException("not JSON: " + e.getMessage());
                }
                if (n.has("workload_key")) {
                    records.add(TuningRecord.fromJson(n));
                    recordLines.add(i + 1);
                } else {
                    out.add(ScheduleLog.parse(n, i + 1, target, deviceClass));
                }
            } catch (IllegalArgumentException e) { // a bad field, config or target (TargetException)
                // no newline after it and begun as our records are: an append cut short
                if (i == lines.length - 1 && line.startsWith("{\"workload_key\"")) continue;
                throw new ScheduleFileException(file + ":" + (i + 1) + ": " + e.getMessage());
            }
        }
        if (compiler.isPresent()) {
            for (StoredSchedule s : RecordSchedules.stored(records, compiler.get())) {
                long line = recordLines.get(Math.toIntExact(s.id() - 1));
                out.add(new StoredSchedule(line, s.workloadKey(), s.target(), s.deviceClass(), s.config(), s.status(), s.costUs(), s.defaultCostUs()));
            }
        }
        return out;
    }
}
