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
import dev.relayfarm.tuning.ScheduleStatus;
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
import java.util.Set;
import java.util.stream.Collectors;

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
        String device = device(target, deviceClass);
        return ScheduleRule.configs(tasks, device, read(file, target, device, compiler(target)));
    }

    /** {@link #choose}'s schedules themselves, with their costs (what the {@link dev.relayfarm.tuning.scheduler.ModelGuard} weighs). */
    public static Map<String, StoredSchedule> chosen(Path file, List<TuningTask> tasks, Target target, String deviceClass) throws IOException {
        String device = device(target, deviceClass);
        return ScheduleRule.chosen(tasks, device, read(file, target, device, compiler(target)));
    }

    private static String device(Target target, String deviceClass) {
        return deviceClass != null ? deviceClass : target.isCross() ? Device.UNKNOWN_CLASS : Device.local().deviceClass();
    }

    private static Optional<String> compiler(Target target) {
        return CCompiler.forTarget(target).map(CCompiler::identity);
    }

    /**
     * What a REJECTED line vetoes: the records of this config of this workload, target and device class (the config as
     * its JSON: knob values read back from a file compare equal to those built in memory).
     */
    public record Veto(String workloadKey, String target, String deviceClass, String config) {
        public static Veto of(StoredSchedule s) {
            return new Veto(s.workloadKey(), s.target(), s.deviceClass(), s.config().toJson());
        }

        public static Veto of(TuningRecord r) {
            return new Veto(r.workloadKey(), r.target(), r.deviceClass(), r.config().toJson());
        }
    }

    /**
     * The file's schedules for compiling to {@code target} on {@code deviceClass} with the C compiler {@code compiler}
     * (empty when there is none: then no record applies). Schedule lines without a target or device class are for
     * these; ids are line numbers. A REJECTED line also vetoes the records of its config (same workload, target and
     * device class): how the {@link dev.relayfarm.tuning.scheduler.ModelGuard}'s verdict, appended to a records file,
     * keeps a config that made the whole model slower from applying, and how a reviewer can do the same by hand.
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
            Set<Veto> vetoes = out.stream().filter(s -> s.status() == ScheduleStatus.REJECTED).map(Veto::of).collect(Collectors.toSet());
            List<Integer> kept = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) if (!vetoes.contains(Veto.of(records.get(i)))) kept.add(i);
            for (StoredSchedule s : RecordSchedules.stored(kept.stream().map(records::get).toList(), compiler.get())) {
                long line = recordLines.get(kept.get(Math.toIntExact(s.id() - 1)));
                out.add(new StoredSchedule(line, s.workloadKey(), s.target(), s.deviceClass(), s.config(), s.status(), s.costUs(), s.defaultCostUs()));
            }
        }
        return out;
    }
}
