package dev.relayfarm.fuzz;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A bounded fuzz campaign: {@code inputs} generated inputs, each run through one target on a worker thread
 * with the JVM's default stack and a wall-clock budget, each ending in one {@link Verdict}. The property the
 * campaign checks (issue 13): every input ends in a result or a clean user error — never a {@code Throwable}
 * escaping, never a hang past its budget.
 *
 * <p>Input {@code i} is generated from {@code new Random(seed * 1_000_003 + i)}, so a finding is reproduced
 * by its index alone ({@code -Drelayfarm.fuzz.seed=S -Drelayfarm.fuzz.only=i}); its bytes and stack trace are
 * also saved under {@code target/fuzz-findings/<campaign>/}.
 *
 * <p>Why our own runner instead of a fuzzing library: Jazzer 0.24.0, the coverage-guided choice for the JVM,
 * cannot instrument Java 25 class files ("Unsupported class file major version 69"), which leaves it a blind
 * random-bytes generator; jqwik's author asks that AI agents not use it (printed on every run). Inputs here
 * are grammar-aware instead: generated Relay programs, real ONNX models, real IR documents, then mutated.
 *
 * <p>Settings (system properties, passed through by Maven's {@code -D}): {@code relayfarm.fuzz.inputs} (each
 * test's default is the short CI campaign), {@code relayfarm.fuzz.seed} (default 1: CI reruns the same
 * inputs), {@code relayfarm.fuzz.budget} (per input, default 30 s — a loaded 2-core CI machine must not see
 * false hangs; a real hang is unbounded), {@code relayfarm.fuzz.only}.
 */
public final class FuzzCampaign<I> {
    /** How one input ended. */
    public enum Verdict { OK, USER_ERROR, ESCAPED, HANG }

    /** An input that broke the property. */
    public record Finding(int index, Verdict verdict, String summary, Path saved) {}

    /** What a campaign did. */
    public record Report(String name, long seed, int inputs, int ok, int userErrors, List<Finding> findings, Duration elapsed) {
        /** One table line: the counts the closing note quotes. */
        public String line() {
            long escaped = findings.stream().filter(f -> f.verdict() == Verdict.ESCAPED).count();
            long hangs = findings.stream().filter(f -> f.verdict() == Verdict.HANG).count();
            return String.format("fuzz %-12s seed %d: %,d inputs, %,d ok, %,d user errors, %d escaped, %d hangs in %.1f s (%.0f inputs/s)",
                    name, seed, inputs, ok, userErrors, escaped, hangs, elapsed.toMillis() / 1000.0, inputs * 1000.0 / Math.max(1, elapsed.toMillis()));
        }

        /** The first findings, for an assertion message. */
        public String describeFindings(int max) {
            StringBuilder sb = new StringBuilder(line()).append('\n');
            for (Finding f : findings.subList(0, Math.min(max, findings.size()))) {
                sb.append("  #").append(f.index()).append(' ').append(f.verdict()).append(": ").append(f.summary());
                if (f.saved() != null) sb.append(" (saved to ").append(f.saved()).append(')');
                sb.append('\n');
            }
            return sb.toString();
        }
    }

    /** The code under test: returns normally or throws. */
    @FunctionalInterface
    public interface Target<I> {
        void run(I input) throws Exception;
    }

    /** Turns an input into bytes to save with a finding, and names the file extension. */
    public record Saver<I>(String extension, Function<I, byte[]> bytes) {}

    private static final int MAX_HANGS = 3;

    private final String name;
    private final Function<Random, I> generator;
    private final Target<I> target;
    private final Predicate<Throwable> clean;
    private final Saver<I> saver;

    /**
     * @param clean which throwables are clean user errors (for the pipeline: {@code instanceof} {@link dev.relayfarm.diagnostic.CompileError}
     *     plus whatever the target documents); everything else escaped
     */
    public FuzzCampaign(String name, Function<Random, I> generator, Target<I> target, Predicate<Throwable> clean, Saver<I> saver) {
        this.name = name;
        this.generator = generator;
        this.target = target;
        this.clean = clean;
        this.saver = saver;
    }

    /** The number of inputs: {@code relayfarm.fuzz.inputs} when set, else {@code ciDefault}. */
    public static int inputs(int ciDefault) {
        return Integer.getInteger("relayfarm.fuzz.inputs", ciDefault);
    }

    public Report run(int inputs) {
        long seed = Long.getLong("relayfarm.fuzz.seed", 1L);
        Duration budget = Duration.parse("PT" + System.getProperty("relayfarm.fuzz.budget", "30s").toUpperCase());
        Integer only = Integer.getInteger("relayfarm.fuzz.only");
        List<Finding> findings = new ArrayList<>();
        int ok = 0, userErrors = 0, ran = 0, hangs = 0;
        long start = System.nanoTime();
        ExecutorService worker = newWorker();
        try {
            for (int i = only != null ? only : 0; i < (only != null ? only + 1 : inputs); i++) {
                I input = generator.apply(new Random(seed * 1_000_003L + i));
                ran++;
                Future<?> f = worker.submit(() -> {
                    target.run(input);
                    return null;
                });
                try {
                    f.get(budget.toMillis(), TimeUnit.MILLISECONDS);
                    ok++;
                } catch (ExecutionException e) {
                    Throwable t = e.getCause();
                    if (clean.test(t)) {
                        userErrors++;
                    } else {
                        findings.add(new Finding(i, Verdict.ESCAPED, t.toString().lines().findFirst().orElse(""), save(i, input, t)));
                    }
                } catch (TimeoutException e) {
                    // the hung thread is abandoned (interrupted, in case the code under test listens) and a fresh worker takes over
                    f.cancel(true);
                    worker.shutdownNow();
                    worker = newWorker();
                    findings.add(new Finding(i, Verdict.HANG, "no result after " + budget.toSeconds() + " s", save(i, input, null)));
                    if (++hangs >= MAX_HANGS) break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("fuzz campaign interrupted", e);
        } finally {
            worker.shutdownNow();
        }
        Report r = new Report(name, seed, ran, ok, userErrors, List.copyOf(findings), Duration.ofNanos(System.nanoTime() - start));
        System.out.println(r.line());
        return r;
    }

    private ExecutorService newWorker() {
        // the default stack size on purpose: the stages' threads are not promised a bigger one
        return Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().name("fuzz-" + name).unstarted(r));
    }

    private Path save(int index, I input, Throwable t) {
        try {
            Path dir = Path.of("target", "fuzz-findings", name);
            Files.createDirectories(dir);
            Path file = dir.resolve(index + "." + saver.extension());
            Files.write(file, saver.bytes().apply(input));
            if (t != null) {
                StringWriter trace = new StringWriter();
                t.printStackTrace(new PrintWriter(trace));
                String text = trace.toString();
                Files.writeString(dir.resolve(index + ".txt"), text.length() > 20_000 ? text.substring(0, 20_000) + "\n..." : text);
            }
            return file;
        } catch (IOException | RuntimeException e) {
            return null; // the finding still counts; only its copy on disk is missing
        }
    }
}
