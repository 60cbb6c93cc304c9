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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
        // the model check timed the whole model with what the records would apply; what lost is rejected in the file
        assertTrue(tune.out().contains("model check: "), tune.out());
        Set<String> rejected = new HashSet<>();
        for (String line : Files.readAllLines(records)) {
            JsonNode n = new ObjectMapper().readTree(line);
            if (n.has("workload_key")) continue;
            assertEquals("rejected", n.get("status").asText(), line);
            assertTrue(n.get("note").asText().startsWith("model check: "), line);
            rejected.add(n.get("workload").asText() + " " + n.get("config"));
        }
        if (!rejected.isEmpty()) assertTrue(tune.out().contains("rejected schedule lines appended"), tune.out());

        Path out = tmp.resolve("tuned");
        CliRun compile = CliRun.relayc("compile", model.toString(), "--schedules", records.toString(), "-o", out.toString());
        assertEquals(0, compile.exitCode(), compile.err());
        JsonNode manifest = new ObjectMapper().readTree(out.resolve("manifest.json").toFile());
        for (JsonNode k : manifest.get("kernels")) {
            String workload = k.get("workload").asText();
            // the cheapest record the model check did not reject
            TuningRecord best = written.stream().filter(r -> r.workloadKey().equals(workload) && r.ok() && !rejected(rejected, r))
                    .min((a, b) -> Double.compare(a.costUs(), b.costUs())).orElseThrow();
            boolean beat = best.fasterThanDefault();
            assertEquals(beat ? "tuned" : "default", k.get("source").asText(), workload + ": best " + best.toJson());
            if (beat) assertEquals(new ObjectMapper().readTree(best.config().toJson()), k.get("config"));
        }
    }

    private static boolean rejected(Set<String> rejected, TuningRecord r) {
        try {
            return rejected.contains(r.workloadKey() + " " + new ObjectMapper().readTree(r.config().toJson()));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
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
        CliRun check = CliRun.relayc("tune", model.toString(), "-o", tmp.resolve("r.jsonl").toString(), "--trials", "4", "--model-check", "maybe");
        assertEquals(1, check.exitCode());
        assertTrue(check.err().contains("--model-check must be on or off, got \"maybe\""), check.err());
        CliRun budget = CliRun.relayc("tune", model.toString(), "-o", tmp.resolve("r.jsonl").toString(), "--budget", "soon");
        assertTrue(budget.exitCode() != 0 && budget.err().contains("--budget"), budget.err());
    }
}
