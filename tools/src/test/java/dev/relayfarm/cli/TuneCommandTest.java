package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code relayc tune}, then {@code relayc compile --schedules} with what it wrote: the loop a user runs. */
class TuneCommandTest {
    @Test
    void tunesWithinTheBudgetAndCompileAppliesOnlyWhatBeatTheDefault(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Path model = tmp.resolve("layers.relay");
        Files.writeString(model, TuningModels.LAYERS);
        Path records = tmp.resolve("records.jsonl");
        CliRun tune = CliRun.relayc("tune", model.toString(), "-o", records.toString(), "--trials", "10", "--strategy", "random", "--batch", "2",
                "--threads", "1");
        assertEquals(0, tune.exitCode(), tune.err());
        assertTrue(tune.out().contains("tuning " + model + ": 5 workloads, strategy random, budget 10 trials"), tune.out());
        long rounds = tune.err().lines().filter(l -> l.startsWith("tune: ")).count();
        assertTrue(rounds >= 5 && rounds <= 10, "a progress line per round, each workload at least one:\n" + tune.err());
        assertTrue(tune.out().contains("model (kernel time per run") && tune.out().contains("10 trials in"), tune.out());
        assertEquals(5, tune.out().lines().filter(l -> l.startsWith("nn.") || l.startsWith("softmax") || l.matches("^\\S+\\(.*")).count(),
                "one row per workload:\n" + tune.out());
        List<TuningRecord> written = RecordFile.read(records);
        assertEquals(10 + rounds, written.size(), "each round: its configs and the default");

        Path out = tmp.resolve("tuned");
        CliRun compile = CliRun.relayc("compile", model.toString(), "--schedules", records.toString(), "-o", out.toString());
        assertEquals(0, compile.exitCode(), compile.err());
        JsonNode manifest = new ObjectMapper().readTree(out.resolve("manifest.json").toFile());
        for (JsonNode k : manifest.get("kernels")) {
            String workload = k.get("workload").asText();
            TuningRecord best = written.stream().filter(r -> r.workloadKey().equals(workload) && r.ok())
                    .min((a, b) -> Double.compare(a.costUs(), b.costUs())).orElseThrow();
            boolean beat = best.fasterThanDefault();
            assertEquals(beat ? "tuned" : "default", k.get("source").asText(), workload + ": best " + best.toJson());
            if (beat) assertEquals(new ObjectMapper().readTree(best.config().toJson()), k.get("config"));
        }
    }

    @Test
    void aBudgetIsRequiredAndStrategiesAreNamed(@TempDir Path tmp) throws Exception {
        Path model = tmp.resolve("layers.relay");
        Files.writeString(model, TuningModels.LAYERS);
        CliRun none = CliRun.relayc("tune", model.toString(), "-o", tmp.resolve("r.jsonl").toString());
        assertEquals(1, none.exitCode());
        assertTrue(none.err().contains("--trials N and/or --budget DURATION"), none.err());
        CliRun bad = CliRun.relayc("tune", model.toString(), "-o", tmp.resolve("r.jsonl").toString(), "--trials", "4", "--strategy", "anneal");
        assertEquals(1, bad.exitCode());
        assertTrue(bad.err().contains("unknown strategy 'anneal'") && bad.err().contains("xgb, ga, random, grid"), bad.err());
        CliRun budget = CliRun.relayc("tune", model.toString(), "-o", tmp.resolve("r.jsonl").toString(), "--budget", "soon");
        assertTrue(budget.exitCode() != 0 && budget.err().contains("--budget"), budget.err());
    }
}
