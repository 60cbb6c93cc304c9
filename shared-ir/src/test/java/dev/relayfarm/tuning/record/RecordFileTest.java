package dev.relayfarm.tuning.record;

import static dev.relayfarm.tuning.record.Records.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.ScheduleFileException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RecordFile}: appends survive a crash mid-write, bad lines are located, concurrent appends stay whole lines. */
class RecordFileTest {
    @TempDir
    Path tmp;

    @Test
    void appendedBatchesReadBackInOrder() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        List<TuningRecord> a = List.of(ok("w", config(8), 10, 20.0, 0), failed("w", config(4), MeasureError.TIMEOUT, 1));
        List<TuningRecord> b = List.of(ok("v", config(2), 5, 6.0, 2));
        RecordFile.append(f, a);
        RecordFile.append(f, b);
        RecordFile.append(f, List.of());
        List<TuningRecord> all = new ArrayList<>(a);
        all.addAll(b);
        assertEquals(all, RecordFile.read(f));
        assertEquals(3, Files.readAllLines(f).size(), "one line per record");
        RecordFile.write(tmp.resolve("copy.jsonl"), all);
        assertEquals(Files.readString(f), Files.readString(tmp.resolve("copy.jsonl")));
    }

    @Test
    void aTornLastLineIsSkippedThenCutOffByTheNextAppend() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        TuningRecord first = ok("w", config(8), 10, 20.0, 0), later = ok("w", config(2), 9, 20.0, 5);
        RecordFile.append(f, List.of(first));
        String whole = later.toJson();
        Files.writeString(f, whole.substring(0, whole.length() / 2), StandardOpenOption.APPEND); // the tuner died mid-write
        RecordFile.Contents c = RecordFile.readContents(f);
        assertEquals(List.of(first), c.records());
        assertTrue(c.tornLastLine());
        RecordFile.append(f, List.of(later));
        assertEquals(List.of(first, later), RecordFile.read(f));
        assertFalse(RecordFile.readContents(f).tornLastLine());
    }

    @Test
    void aWholeLastLineWithoutNewlineIsKept() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        TuningRecord first = ok("w", config(8), 10, 20.0, 0), later = ok("w", config(2), 9, 20.0, 5);
        Files.writeString(f, first.toJson()); // written by hand, no newline
        RecordFile.append(f, List.of(later));
        assertEquals(List.of(first, later), RecordFile.read(f));
    }

    @Test
    void aBadLineInTheMiddleNamesFileAndLine() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        Files.writeString(f, "# records\n" + ok("w", config(8), 10, 20.0, 0).toJson() + "\n{\"workload_key\": \"w\"}\n"
                + ok("w", config(2), 9, 20.0, 0).toJson() + "\n");
        String msg = assertThrows(ScheduleFileException.class, () -> RecordFile.read(f)).getMessage();
        assertTrue(msg.startsWith(f + ":3: ") && msg.contains("needs \"config\""), msg);
    }

    @Test
    void scheduleLinesAmongTheRecordsAreSkippedAndAppendsGoOnAfterThem() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        TuningRecord a = ok("w", config(8), 10, 20.0, 0), b = ok("w", config(2), 9, 20.0, 1);
        Files.writeString(f, a.toJson() + "\n{\"workload\": \"w\", \"config\": " + config(8).toJson() + ", \"status\": \"rejected\"}\n");
        RecordFile.append(f, List.of(b));
        assertEquals(List.of(a, b), RecordFile.read(f));
        // a schedule line written by hand without its newline is whole: ended, not cut off as a torn append
        String rejected = "{\"workload\": \"w\", \"config\": " + config(2).toJson() + ", \"status\": \"rejected\"}";
        Files.writeString(f, a.toJson() + "\n" + rejected);
        RecordFile.append(f, List.of(b));
        assertEquals(List.of(a.toJson(), rejected, b.toJson()), Files.readAllLines(f));
    }

    @Test
    void concurrentAppendsKeepEveryRecordWhole() throws Exception {
        Path f = tmp.resolve("r.jsonl");
        List<TuningRecord> expected = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                List<TuningRecord> batch = new ArrayList<>();
                for (int i = 0; i < 25; i++) batch.add(ok("w" + t, config(i + 1), i + 1, 100.0, i));
                expected.addAll(batch);
                done.add(pool.submit(() -> {
                    for (TuningRecord r : batch) RecordFile.append(f, List.of(r));
                    return null;
                }));
            }
            for (Future<?> d : done) d.get();
        }
        List<TuningRecord> read = RecordFile.read(f);
        assertEquals(expected.size(), read.size());
        assertEquals(new java.util.HashSet<>(expected), new java.util.HashSet<>(read));
    }
}
