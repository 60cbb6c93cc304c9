package dev.relayfarm.cli;

import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.RecordKey;
import dev.relayfarm.tuning.record.RecordSet;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.record.WorkloadStats;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc records export|import|best|stats}: tuning records files (JSON Lines, {@link TuningRecord}) shared
 * between machines and runs. Records are grouped by what makes their costs comparable — workload, target, device
 * class, C compiler ({@link RecordKey}) — and never compared across groups.
 */
@Command(name = "records", mixinStandardHelpOptions = true,
        description = {"Tuning records files (JSON lines, one measurement each, as relayc tune writes them): export, import (merge), best, stats.",
                "Costs are compared only within one workload, target, device class and C compiler."},
        subcommands = {RecordsCommand.Export.class, RecordsCommand.Import.class, RecordsCommand.Best.class, RecordsCommand.Stats.class})
public final class RecordsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "Missing required subcommand (export, import, best or stats)");
    }

    /** The records of {@code files} merged (each measurement once, in time order); a missing file is a user error. */
    static RecordSet read(List<Path> files) throws IOException {
        List<RecordSet> sets = new ArrayList<>();
        for (Path f : files) {
            try {
                sets.add(new RecordSet(RecordFile.read(f)));
            } catch (NoSuchFileException e) {
                throw new NoSuchFileException("no such file: " + f);
            }
        }
        return RecordSet.merge(sets);
    }

    /** {@code --target} and {@code --device-class}, which every subcommand but import filters by. */
    static final class Filter {
        @Option(names = "--target", paramLabel = "TARGET", description = "only records for this target string (as recorded, e.g. \"c -mcpu=native\")")
        String target;

        @Option(names = "--device-class", paramLabel = "CLASS", description = "only records measured on this device class")
        String deviceClass;

        RecordSet apply(RecordSet records) {
            return records.filter(Optional.ofNullable(target), Optional.ofNullable(deviceClass));
        }
    }

    /** Runs {@code body}, reporting a missing or unreadable file as a user error. */
    private static int run(CommandSpec spec, Callable<Integer> body) throws Exception {
        try {
            return body.call();
        } catch (NoSuchFileException e) {
            return CliErrors.report(spec, e.getMessage().startsWith("no such file") ? e.getMessage() : "no such file: " + e.getMessage());
        } catch (IOException e) {
            return CliErrors.report(spec, e.getMessage());
        }
    }

    @Command(name = "export", mixinStandardHelpOptions = true,
            description = "Merge records files, keep those for a target and/or device class, and write them as JSON lines (to -o or standard output).")
    static final class Export implements Callable<Integer> {
        @Parameters(arity = "1..*", paramLabel = "FILE", description = "records files")
        List<Path> files;

        @picocli.CommandLine.Mixin
        Filter filter = new Filter();

        @Option(names = {"-o", "--output"}, paramLabel = "FILE.jsonl", description = "write here (replaced at once) instead of standard output")
        Path out;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return run(spec, () -> {
                RecordSet records = filter.apply(read(files));
                if (out != null) {
                    RecordFile.write(out, records.records());
                    spec.commandLine().getErr().printf("exported %d records to %s%n", records.records().size(), out);
                    spec.commandLine().getErr().flush();
                } else {
                    PrintWriter o = spec.commandLine().getOut();
                    for (TuningRecord r : records.records()) o.println(r.toJson());
                    o.flush();
                }
                return 0;
            });
        }
    }

    @Command(name = "import", mixinStandardHelpOptions = true,
            description = "Merge records files into INTO (created if missing): each measurement once; the new ones are appended, so a tuner may be appending to INTO meanwhile.")
    static final class Import implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "INTO", description = "the records file to import into")
        Path into;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "FILE", description = "records files to import")
        List<Path> files;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return run(spec, () -> {
                RecordSet before = Files.exists(into) ? new RecordSet(RecordFile.read(into)) : new RecordSet(List.of());
                RecordSet incoming = read(files);
                RecordSet merged = RecordSet.merge(List.of(before, incoming));
                // append, never rewrite: a tuner appending to the same file under the records lock loses nothing
                Set<TuningRecord> known = new HashSet<>(before.records());
                List<TuningRecord> added = merged.records().stream().filter(r -> !known.contains(r)).toList();
                RecordFile.append(into, added);
                PrintWriter o = spec.commandLine().getOut();
                o.printf("imported %d new records into %s (%d already there), %d in all%n", added.size(), into, incoming.records().size() - added.size(),
                        merged.records().size());
                o.flush();
                return 0;
            });
        }
    }

    @Command(name = "best", mixinStandardHelpOptions = true,
            description = {"The k fastest configs per workload (per target, device class and compiler), with the default's cost from the same batch.",
                    "-o writes those records as JSON lines: a small file relayc compile --schedules applies like the whole log."})
    static final class Best implements Callable<Integer> {
        @Parameters(arity = "1..*", paramLabel = "FILE", description = "records files")
        List<Path> files;

        @picocli.CommandLine.Mixin
        Filter filter = new Filter();

        @Option(names = "-k", paramLabel = "K", defaultValue = "1", description = "configs per workload (default ${DEFAULT-VALUE})")
        int k;

        @Option(names = {"-o", "--output"}, paramLabel = "FILE.jsonl", description = "also write the best records here")
        Path out;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (k < 1) return CliErrors.report(spec, "-k must be at least 1, got " + k);
            return run(spec, () -> {
                Map<RecordKey, List<TuningRecord>> best = filter.apply(read(files)).best(k);
                PrintWriter o = spec.commandLine().getOut();
                String group = null;
                for (Map.Entry<RecordKey, List<TuningRecord>> e : best.entrySet()) {
                    String g = context(e.getKey());
                    if (!g.equals(group)) {
                        o.println(g);
                        group = g;
                    }
                    o.println("  " + e.getKey().workloadKey());
                    for (int i = 0; i < e.getValue().size(); i++) {
                        TuningRecord r = e.getValue().get(i);
                        o.printf("    %d. %s µs (default %s µs, %s)  %s%n", i + 1, us(OptionalDouble.of(r.costUs())), us(r.defaultCostUs()),
                                speedup(r.defaultCostUs(), r.costUs()), r.config().toJson());
                    }
                }
                if (best.isEmpty()) o.println("no successful records");
                o.flush();
                if (out != null) RecordFile.write(out, best.values().stream().flatMap(List::stream).toList());
                return 0;
            });
        }
    }

    @Command(name = "stats", mixinStandardHelpOptions = true,
            description = "Per workload (per target, device class and compiler): records, how many ran and failed by error, best and default µs, speedup.")
    static final class Stats implements Callable<Integer> {
        @Parameters(arity = "1..*", paramLabel = "FILE", description = "records files")
        List<Path> files;

        @picocli.CommandLine.Mixin
        Filter filter = new Filter();

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return run(spec, () -> {
                RecordSet records = filter.apply(read(files));
                PrintWriter o = spec.commandLine().getOut();
                String group = null;
                List<WorkloadStats> stats = records.stats();
                for (WorkloadStats s : stats) {
                    String g = context(s.key());
                    if (!g.equals(group)) {
                        o.println(g);
                        o.printf("  %7s %5s %-30s %12s %12s %8s  %s%n", "records", "ok", "failed", "best µs", "default µs", "speedup", "template / workload");
                        group = g;
                    }
                    StringJoiner failed = new StringJoiner(", ");
                    for (Map.Entry<MeasureError, Integer> f : s.failed().entrySet()) failed.add(f.getKey() + " " + f.getValue());
                    o.printf("  %7d %5d %-30s %12s %12s %8s  %s %s%n", s.records(), s.ok(), failed.length() == 0 ? "-" : failed.toString(), us(s.bestUs()),
                            us(s.defaultUs()), s.speedup().isPresent() ? String.format(Locale.ROOT, "%.2fx", s.speedup().getAsDouble()) : "-",
                            s.template(), s.key().workloadKey());
                }
                o.printf("%d records, %d workloads%n", records.records().size(), stats.size());
                o.flush();
                return 0;
            });
        }
    }

    private static String context(RecordKey k) {
        return "target \"" + k.target() + "\", device class " + k.deviceClass() + ", compiler \"" + k.compiler() + "\"";
    }

    private static String us(OptionalDouble v) {
        return v.isPresent() ? String.format(Locale.ROOT, "%.3f", v.getAsDouble()) : "-";
    }

    private static String speedup(OptionalDouble defaultUs, double us) {
        return defaultUs.isPresent() && us > 0 ? String.format(Locale.ROOT, "%.2fx", defaultUs.getAsDouble() / us) : "-";
    }
}
