package dev.relayfarm.tuning.record;

import static dev.relayfarm.tuning.record.Records.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.ScheduleFileException;
import dev.relayfarm.tuning.ScheduleLog;
import dev.relayfarm.tuning.ScheduleStatus;
import dev.relayfarm.tuning.StoredSchedule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RecordSchedules} and {@link ScheduleFile}: which records may apply, and a file mixing both kinds of line. */
class RecordSchedulesTest {
    @Test
    void theCheapestRecordPerKeyAppliesOnlyWhenFasterThanItsDefault() {
        TuningRecord slow = ok("w", config(8), 10, 20.0, 0), fast = ok("w", config(4), 8, 16.0, 1);
        assertEquals(List.of(new StoredSchedule(2, "w", TARGET, HERE.deviceClass(), config(4), ScheduleStatus.APPROVED, OptionalDouble.of(8),
                OptionalDouble.of(16))), RecordSchedules.stored(List.of(slow, fast, failed("w", config(1), MeasureError.RUNTIME_ERROR, 3)), CC));
        // the cheapest lost to the default of its own batch: the default is the best known, nothing slower applies instead
        assertEquals(List.of(), RecordSchedules.stored(List.of(slow, ok("w", config(4), 8, 7.5, 1)), CC));
        assertEquals(List.of(), RecordSchedules.stored(List.of(ok("w", config(4), 8, null, 1)), CC), "no baseline: not shown faster");
        assertEquals(List.of(), RecordSchedules.stored(List.of(ok("w", config(4), 8, 8.0, 1)), CC), "as fast is not faster");
    }

    @Test
    void recordsOfAnotherCompilerNeverApplyOthersKeepTheirTargetAndDevice() {
        TuningRecord fast = ok("w", config(4), 8, 16.0, 1);
        assertEquals(List.of(), RecordSchedules.stored(List.of(fast), "clang version 18.1.3"));
        List<StoredSchedule> s = RecordSchedules.stored(List.of(fast, on(ok("w", config(2), 1, 30.0, 2), TARGET, THERE, CC),
                on(ok("w", config(16), 1, 30.0, 3), "c -mcpu=native", HERE, CC)), CC);
        assertEquals(3, s.size(), "one per target and device class, each for its own: " + s);
        assertEquals(List.of(HERE.deviceClass(), THERE.deviceClass(), HERE.deviceClass()), s.stream().map(StoredSchedule::deviceClass).toList());
        assertEquals(List.of(TARGET, TARGET, "c -mcpu=native"), s.stream().map(StoredSchedule::target).toList());
    }

    @Test
    void aSchedulesFileMixesScheduleLinesAndRecords(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("s.jsonl");
        String torn = ok("x", config(4), 1, 9.0, 9).toJson();
        Files.writeString(f, "# reviewed\n{\"workload\": \"v\", \"config\": " + config(2).toJson() + "}\n" + ok("w", config(8), 10, 20.0, 0).toJson() + "\n"
                + torn.substring(0, 40));
        List<StoredSchedule> s = ScheduleFile.read(f, Target.parse(TARGET), HERE.deviceClass(), Optional.of(CC));
        assertEquals(List.of(new StoredSchedule(2, "v", TARGET, HERE.deviceClass(), config(2), ScheduleStatus.APPROVED, OptionalDouble.empty(),
                        OptionalDouble.empty()),
                new StoredSchedule(3, "w", TARGET, HERE.deviceClass(), config(8), ScheduleStatus.APPROVED, OptionalDouble.of(10), OptionalDouble.of(20))), s);
        assertEquals(1, ScheduleFile.read(f, Target.parse(TARGET), HERE.deviceClass(), Optional.empty()).size(), "no compiler: no record applies");
        Files.writeString(f, ok("w", config(8), 10, 20.0, 0).toJson() + "\n{\"workload_key\": \"w\", \"cost_us\": 1}\n\n");
        String msg = assertThrows(ScheduleFileException.class, () -> ScheduleFile.read(f, Target.parse(TARGET), HERE.deviceClass(), Optional.of(CC)))
                .getMessage();
        assertTrue(msg.startsWith(f + ":2: "), msg);
    }

    @Test
    void aRejectedLineVetoesItsConfigsRecordsAndTheNextBestApplies(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("r.jsonl");
        TuningRecord best = ok("w", config(4), 8, 16.0, 1), second = ok("w", config(2), 12, 16.0, 2);
        StoredSchedule veto = new StoredSchedule(1, "w", TARGET, HERE.deviceClass(), config(4), ScheduleStatus.REJECTED, OptionalDouble.of(8),
                OptionalDouble.of(16));
        Files.writeString(f, best.toJson() + "\n" + second.toJson() + "\n" + ScheduleLog.line(veto, "slower in the model") + "\n");
        List<StoredSchedule> s = ScheduleFile.read(f, Target.parse(TARGET), HERE.deviceClass(), Optional.of(CC));
        assertEquals(List.of(ScheduleStatus.REJECTED, ScheduleStatus.APPROVED), s.stream().map(StoredSchedule::status).toList());
        assertEquals(config(2), s.get(1).config(), "the vetoed config's record no longer applies: " + s);
        assertEquals(2, s.get(1).id(), "ids stay the records' line numbers");
        // a veto for another device class leaves this one's records alone
        Files.writeString(f, best.toJson() + "\n" + ScheduleLog.line(new StoredSchedule(1, "w", TARGET, THERE.deviceClass(), config(4),
                ScheduleStatus.REJECTED, OptionalDouble.empty(), OptionalDouble.empty()), null) + "\n");
        assertEquals(config(4), ScheduleFile.read(f, Target.parse(TARGET), HERE.deviceClass(), Optional.of(CC)).stream()
                .filter(x -> x.status() == ScheduleStatus.APPROVED).findFirst().orElseThrow().config());
    }
}
