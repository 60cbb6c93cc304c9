package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relayc records export|import|best|stats} over records files built with the library's writer. */
class RecordsCommandTest {
    private static final Device A = Device.of("x86_64", "CPU A", List.of("avx", "avx2"), 2);
    private static final Device B = Device.of("aarch64", "CPU B", List.of("asimd"), 4);
    private static final String CC = "gcc (Test) 13.2.0", X86 = "c -mcpu=x86-64-v3", ARM = "c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    @TempDir
    Path tmp;

    private static ScheduleConfig config(int x) {
        return new ScheduleConfig("dense_pack.x86", Map.of("tile_x", x));
    }

    private static TuningRecord ok(String w, int x, double us, double defaultUs, String target, Device d, int second) {
        return new TuningRecord(w, config(x), target, d, CC, "0.1.0", new Measurement.Cost(us, 0.01, 100, 5), OptionalDouble.of(defaultUs),
                T0.plusSeconds(second));
    }

    private static TuningRecord failed(String w, int x, MeasureError e, int second) {
        return new TuningRecord(w, config(x), X86, A, CC, "0.1.0", new Measurement.Failure(e, "detail"), OptionalDouble.of(20), T0.plusSeconds(second));
    }

    private final List<TuningRecord> first = List.of(ok("w1", 8, 10, 20, X86, A, 0), ok("w1", 4, 8, 20, X86, A, 1), failed("w1", 2, MeasureError.TIMEOUT, 2),
            failed("w1", 16, MeasureError.WRONG_ANSWER, 3));
    private final List<TuningRecord> second = List.of(ok("w1", 4, 8, 20, X86, A, 1), ok("w2", 1, 5, 4, X86, A, 4), ok("w1", 8, 3, 9, ARM, B, 5));

    private Path file(String name, List<TuningRecord> records) throws Exception {
        Path f = tmp.resolve(name);
        RecordFile.append(f, records);
        return f;
    }

    @Test
    void importMergesAndDedupes() throws Exception {
        Path into = file("into.jsonl", first), more = file("more.jsonl", second);
        CliRun r = CliRun.relayc("records", "import", into.toString(), more.toString(), more.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("imported 2 new records") && r.out().contains("6 in all"), r.out());
        List<TuningRecord> all = RecordFile.read(into);
        assertEquals(6, all.size());
        assertEquals(6, all.stream().distinct().count());
        CliRun again = CliRun.relayc("records", "import", into.toString(), more.toString());
        assertTrue(again.out().contains("imported 0 new records"), again.out());
        Path fresh = tmp.resolve("fresh.jsonl");
        assertEquals(0, CliRun.relayc("records", "import", fresh.toString(), more.toString()).exitCode());
        assertEquals(second.size(), RecordFile.read(fresh).size());
    }

    @Test
    void exportFiltersByTargetAndDeviceClass() throws Exception {
        Path a = file("a.jsonl", first), b = file("b.jsonl", second), out = tmp.resolve("arm.jsonl");
        CliRun r = CliRun.relayc("records", "export", a.toString(), b.toString(), "--device-class", B.deviceClass(), "-o", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(List.of(second.get(2)), RecordFile.read(out));
        CliRun toStdout = CliRun.relayc("records", "export", a.toString(), b.toString(), "--target", X86);
        assertEquals(0, toStdout.exitCode(), toStdout.err());
        List<String> lines = toStdout.out().lines().toList();
        assertEquals(5, lines.size(), toStdout.out());
        for (String l : lines) assertEquals(X86, TuningRecord.fromJson(l).target());
    }

    @Test
    void bestListsTopKPerWorkloadAndWritesThem() throws Exception {
        Path a = file("a.jsonl", first), b = file("b.jsonl", second), out = tmp.resolve("best.jsonl");
        CliRun r = CliRun.relayc("records", "best", a.toString(), b.toString(), "-k", "2", "--target", X86, "-o", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        String o = r.out();
        assertTrue(o.contains("1. 8.000 µs (default 20.000 µs, 2.50x)  " + config(4).toJson()), o);
        assertTrue(o.contains("2. 10.000 µs (default 20.000 µs, 2.00x)  " + config(8).toJson()), o);
        assertTrue(o.indexOf("1. 8.000") < o.indexOf("2. 10.000"), o);
        assertTrue(o.contains("1. 5.000 µs (default 4.000 µs, 0.80x)"), "w2's best is slower than its default, and says so: " + o);
        assertEquals(List.of(first.get(1), first.get(0), second.get(1)), RecordFile.read(out));
        assertEquals(1, CliRun.relayc("records", "best", a.toString(), "-k", "0").exitCode());
    }

    @Test
    void statsCountOutcomesPerWorkloadDeviceAndTarget() throws Exception {
        Path a = file("a.jsonl", first), b = file("b.jsonl", second);
        CliRun r = CliRun.relayc("records", "stats", a.toString(), b.toString());
        assertEquals(0, r.exitCode(), r.err());
        List<String> lines = r.out().lines().toList();
        String w1 = lines.stream().filter(l -> l.endsWith(" w1") && l.contains("TIMEOUT")).findFirst().orElseThrow(() -> new AssertionError(r.out()));
        assertTrue(w1.matches("\\s+4\\s+2\\s+WRONG_ANSWER 1, TIMEOUT 1\\s+8\\.000\\s+20\\.000\\s+2\\.50x\\s+dense_pack\\.x86 w1"), w1);
        assertTrue(r.out().contains("device class " + B.deviceClass()), "the arm records are a group of their own: " + r.out());
        assertTrue(r.out().contains("6 records, 3 workloads"), "a record in both files counts once: " + r.out());
        CliRun arm = CliRun.relayc("records", "stats", a.toString(), b.toString(), "--target", ARM);
        assertTrue(arm.out().contains("1 records, 1 workloads"), arm.out());
    }

    @Test
    void missingAndBadFilesAreUserErrors() throws Exception {
        CliRun missing = CliRun.relayc("records", "stats", tmp.resolve("nope.jsonl").toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no such file: ") && missing.err().contains("nope.jsonl"), missing.err());
        Path bad = tmp.resolve("bad.jsonl");
        Files.writeString(bad, "{\"workload_key\": 1}\n\n");
        CliRun r = CliRun.relayc("records", "best", bad.toString());
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("bad.jsonl:1: "), r.err());
    }
}
