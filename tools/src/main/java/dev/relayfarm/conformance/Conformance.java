package dev.relayfarm.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs {@link OnnxCheck} over every test folder below some directories, in parallel, each with a
 * time limit. A test that overruns is reported as a timeout and its thread abandoned (a daemon, so
 * it cannot keep the JVM alive), and its slot is given to the next test.
 */
public final class Conformance {
    private Conformance() {}

    /** All results, sorted by name, with the counts a CI line needs. */
    public record Summary(List<OnnxCheck.Result> results) {
        public long passed() {
            return count(OnnxCheck.Status.PASS);
        }

        public long skipped() {
            return count(OnnxCheck.Status.SKIP);
        }

        /** FAIL and ERROR: every failure has a reported reason. */
        public long failed() {
            return results.size() - passed() - skipped();
        }

        private long count(OnnxCheck.Status s) {
            return results.stream().filter(r -> r.status() == s).count();
        }

        /** The closing line, in the form CI runners recognise. */
        public String countsLine() {
            return passed() + " passed, " + failed() + " failed, " + skipped() + " skipped";
        }

        /** Failures and skips grouped by kind of reason, most frequent first, with example tests. */
        public String table() {
            Map<String, List<String>> groups = new TreeMap<>();
            for (OnnxCheck.Result r : results) {
                if (r.status() == OnnxCheck.Status.PASS) continue;
                String key = switch (r.status()) {
                    case SKIP -> "SKIP unsupported " + r.group();
                    case FAIL -> "FAIL numerics/outputs";
                    default -> "FAIL " + r.group() + ": " + normalize(r.reason());
                };
                groups.computeIfAbsent(key, k -> new ArrayList<>()).add(r.name());
            }
            StringBuilder sb = new StringBuilder(String.format("%6s  %-90s  %s%n", "count", "reason", "examples"));
            groups.entrySet().stream()
                    .sorted(Comparator.comparingInt((Map.Entry<String, List<String>> e) -> -e.getValue().size()).thenComparing(Map.Entry::getKey))
                    .forEach(e -> sb.append(String.format("%6d  %-90s  %s%n", e.getValue().size(), truncate(e.getKey(), 90),
                            e.getValue().stream().limit(3).collect(Collectors.joining(", ")))));
            return sb.toString();
        }

        /** Strips the file/node prefix and numbers so that the same failure in different tests groups together. */
        private static String normalize(String reason) {
            String r = reason.replaceFirst("^(import|run|load): ", "");
            r = r.replaceAll("model\\.onnx: node '[^']*' ", "");
            r = r.replaceAll("\\(([A-Za-z]+), opset \\d+\\)", "$1");
            r = r.replaceAll("-?\\d+(\\.\\d+)?(e-?\\d+)?", "N");
            return r;
        }

        private static String truncate(String s, int n) {
            return s.length() <= n ? s : s.substring(0, n - 1) + "…";
        }
    }

    /** Test folders (holding model.onnx) at or below each root, sorted. */
    public static List<Path> findTests(List<Path> roots) {
        List<Path> out = new ArrayList<>();
        for (Path root : roots) {
            if (!Files.isDirectory(root)) throw new IllegalArgumentException(root + " is not a directory");
            try (Stream<Path> s = Files.walk(root, 4)) {
                s.filter(p -> Files.isRegularFile(p.resolve("model.onnx"))).sorted().forEach(out::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    public static Summary run(List<Path> tests, OnnxCheck.Options options, int threads, long limitMillis, Consumer<OnnxCheck.Result> onResult) {
        ConcurrentLinkedQueue<OnnxCheck.Result> results = new ConcurrentLinkedQueue<>();
        Semaphore slots = new Semaphore(threads);
        List<Running> running = new ArrayList<>();
        int next = 0;
        while (next < tests.size() || !running.isEmpty()) {
            while (next < tests.size() && slots.tryAcquire()) {
                Path dir = tests.get(next++);
                Running r = new Running(dir);
                r.thread = Thread.ofPlatform().daemon().name("conformance-" + dir.getFileName()).start(() -> {
                    OnnxCheck.Result res;
                    try {
                        res = OnnxCheck.check(dir, options);
                    } catch (Throwable t) { // StackOverflowError, OutOfMemoryError: a reported failure, not a dead run
                        res = new OnnxCheck.Result(dir.getFileName().toString(), OnnxCheck.Status.ERROR, "crash: " + t, "crash", 0, 0);
                    }
                    r.finish(res);
                });
                running.add(r);
            }
            long now = System.nanoTime();
            for (var it = running.iterator(); it.hasNext(); ) {
                Running r = it.next();
                OnnxCheck.Result res = r.result();
                if (res == null && (now - r.started) / 1_000_000 > limitMillis) {
                    res = new OnnxCheck.Result(r.dir.getFileName().toString(), OnnxCheck.Status.ERROR,
                            "timeout: still running after " + limitMillis + " ms", "timeout", 0, 0);
                    r.thread.interrupt();
                }
                if (res != null) {
                    it.remove();
                    slots.release();
                    results.add(res);
                    onResult.accept(res);
                }
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        List<OnnxCheck.Result> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparing(OnnxCheck.Result::name));
        return new Summary(sorted);
    }

    private static final class Running {
        final Path dir;
        final long started = System.nanoTime();
        Thread thread;
        private OnnxCheck.Result result;

        Running(Path dir) {
            this.dir = dir;
        }

        synchronized void finish(OnnxCheck.Result r) {
            result = r;
        }

        synchronized OnnxCheck.Result result() {
            return result;
        }
    }
}
