package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.vta.tuning.VtaTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relayc vta MODEL --search --records FILE}: the first run tunes the quantized model's accelerator layers into
 * records of device class {@code vta-sim-1x16x16}; a second run over the same file measures nothing and runs each
 * layer with its best stored schedule, in the cycles the search reported; no file without --search is a user error.
 */
class VtaCommandTest {
    @TempDir
    Path tmp;

    /** Two 3×3 convolutions with relu: after quantize (first conv included) both are int8 accelerator layers. */
    private static final String NET = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 3, 12, 12), float32]) {
              %0 = nn.conv2d(%x, full(0.05f, shape=[16, 3, 3, 3], dtype="float32"), padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
              %1 = nn.relu(%0);
              %2 = nn.conv2d(%1, full(0.02f, shape=[16, 16, 3, 3], dtype="float32"), padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
              nn.relu(%2)
            }
            """;

    private static final Pattern CYCLES = Pattern.compile("cycles default (\\d+), searched (\\d+); bit-exact with the CPU int8 result: yes");

    @Test
    void searchWritesRecordsAndASecondRunAppliesTheBestWithoutMeasuring() throws Exception {
        Path net = tmp.resolve("net.relay"), q = tmp.resolve("q.relay"), records = tmp.resolve("vta.jsonl");
        Files.writeString(net, NET);
        CliRun quantize = CliRun.relayc("quantize", net.toString(), "-o", q.toString(), "--calib-samples", "4", "--no-skip-first");
        assertEquals(0, quantize.exitCode(), quantize.err());

        CliRun first = CliRun.relayc("vta", q.toString(), "--search", "--records", records.toString());
        assertEquals(0, first.exitCode(), first.err() + first.out());
        assertTrue(first.out().contains("stored schedules for 2 of 2 layer workloads"), first.out());
        List<TuningRecord> written = RecordFile.read(records);
        assertTrue(written.size() > 4, "records of both layers' grids: " + written.size());
        assertTrue(written.stream().allMatch(r -> r.deviceClass().equals("vta-sim-1x16x16") && r.ok()), "every record is a simulated cost");
        Matcher m1 = CYCLES.matcher(first.out());
        assertTrue(m1.find(), first.out());
        long searched = Long.parseLong(m1.group(2));
        assertTrue(searched <= Long.parseLong(m1.group(1)), first.out());
        // the applied cycles are the sum of each workload's best record
        long bestSum = written.stream().collect(java.util.stream.Collectors.groupingBy(TuningRecord::workloadKey,
                java.util.stream.Collectors.minBy(java.util.Comparator.comparingDouble(TuningRecord::costUs)))).values().stream()
                .mapToLong(r -> VtaTarget.cycles(r.orElseThrow().costUs())).sum();
        assertEquals(bestSum, searched);

        long lines = Files.readAllLines(records).size();
        CliRun second = CliRun.relayc("vta", q.toString(), "--search", "--records", records.toString());
        assertEquals(0, second.exitCode(), second.err());
        assertTrue(second.out().contains(" 0 schedules measured"), second.out());
        assertEquals(lines, Files.readAllLines(records).size(), "nothing measured again");
        CliRun applied = CliRun.relayc("vta", q.toString(), "--records", records.toString());
        assertEquals(0, applied.exitCode(), applied.err());
        Matcher m2 = CYCLES.matcher(applied.out());
        assertTrue(m2.find(), applied.out());
        assertEquals(searched, Long.parseLong(m2.group(2)), "the stored schedules reproduce the searched cycles");

        CliRun missing = CliRun.relayc("vta", q.toString(), "--records", tmp.resolve("none.jsonl").toString());
        assertEquals(2, missing.exitCode(), missing.out());
        assertTrue(missing.err().contains("none.jsonl: no such file (run with --search to write it)"), missing.err());
    }
}
