package dev.relayfarm.process;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs one external command to completion under a wall-clock limit, and makes sure nothing it started
 * outlives it: the C compiler for kernels today, the autotuner's measurement runner later.
 *
 * <p>What it guarantees, and why each matters:
 * <ul>
 *   <li><b>Own process group.</b> The command runs under {@code setsid} (when installed), so it leads a new
 *       session and process group whose id is its pid. gcc is a driver that forks {@code cc1} and {@code as}:
 *       killing only the driver leaves {@code cc1} compiling for minutes. Killing the group reaches them, and
 *       also children that were re-parented to init (which {@link ProcessHandle#descendants()} no longer sees).
 *       Without {@code setsid} it falls back to the descendants tree.</li>
 *   <li><b>Output read concurrently</b>, keeping only the last {@link Options#outputLimitBytes}: reading to EOF
 *       before waiting (the old way) blocked for as long as the child ran, so the timeout never fired; a child
 *       that prints gigabytes must not fill the heap either.</li>
 *   <li><b>Timeout and interrupt kill the group</b>: SIGTERM, then SIGKILL after {@link Options#killGrace}.
 *       An interrupted caller (a service stopping, a cancelled job) gets {@link InterruptedException} once the
 *       group is dead, not after the child finishes by itself.</li>
 *   <li><b>After a normal exit</b> any process still in the group (a daemon the child left behind) is killed too.</li>
 *   <li><b>JVM exit</b>: a shutdown hook kills every group still running, so stopping a service leaves no
 *       orphaned compiler.</li>
 *   <li><b>No inherited descriptors</b> beyond stdio: stdin is {@code /dev/null}, stdout and stderr one pipe; the
 *       JDK closes every other descriptor in the child.</li>
 * </ul>
 * Not a security sandbox: the child runs as this user with this user's rights (no namespaces, no rlimits).
 */
public final class ChildProcess {
    /**
     * @param timeout          wall-clock limit from start to exit; the group is killed when it passes
     * @param outputLimitBytes how much of the merged stdout+stderr to keep (the end of it: compilers put the
     *                         summary last)
     * @param killGrace        how long SIGTERM has to work before SIGKILL
     * @param workDir          the child's working directory; null for the JVM's
     */
    public record Options(Duration timeout, int outputLimitBytes, Duration killGrace, Path workDir) {
        public static final Options DEFAULT = new Options(Duration.ofMinutes(5), 64 * 1024, Duration.ofMillis(500), null);

        public Options {
            Objects.requireNonNull(timeout, "timeout");
            Objects.requireNonNull(killGrace, "killGrace");
            if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            if (outputLimitBytes < 0) throw new IllegalArgumentException("outputLimitBytes must be >= 0, got " + outputLimitBytes);
        }

        public Options withTimeout(Duration t) {
            return new Options(t, outputLimitBytes, killGrace, workDir);
        }

        public Options withWorkDir(Path dir) {
            return new Options(timeout, outputLimitBytes, killGrace, dir);
        }
    }

    /**
     * A finished run.
     *
     * @param output          the last {@link Options#outputLimitBytes} of stdout+stderr (UTF-8, lossy)
     * @param outputTruncated whether earlier output was dropped
     */
    public record Result(int exitCode, String output, boolean outputTruncated, Duration elapsed) {
        /** The output, with a note in front when its beginning was dropped. */
        public String log() {
            return outputTruncated ? "[... earlier output dropped ...]\n" + output : output;
        }
    }

    /** The command ran past {@link Options#timeout}; its process group has been killed. */
    public static final class TimeoutException extends IOException {
        private final transient Result partial;

        TimeoutException(String message, Result partial) {
            super(message);
            this.partial = partial;
        }

        /** What the command printed before it was killed ({@code exitCode} is -1). */
        public Result partial() {
            return partial;
        }
    }

    private static final String SETSID = findSetsid();
    /** Groups (or lone processes when there is no setsid) still running: what the shutdown hook kills. */
    private static final Set<ProcessHandle> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (ProcessHandle h : RUNNING) killTree(h, "KILL");
        }, "relayfarm-child-process-reaper"));
    }

    private ChildProcess() {}

    /** Whether children get their own process group ({@code setsid} is installed). */
    public static boolean isolatesGroups() {
        return SETSID != null;
    }

    /**
     * Runs {@code command} (program and arguments, no shell) to completion.
     *
     * @throws TimeoutException     it ran past the timeout (its group is dead when this is thrown)
     * @throws InterruptedException the calling thread was interrupted (its group is dead when this is thrown,
     *                              and the thread's interrupt flag is clear, as for any InterruptedException)
     * @throws IOException          it could not be started (no such program, ...)
     */
    public static Result run(List<String> command, Options options) throws IOException, InterruptedException {
        if (command.isEmpty()) throw new IllegalArgumentException("no command");
        List<String> cmd = new ArrayList<>();
        // Under setsid a missing program would be setsid's exit status 1; found here, it is an IOException as without it.
        if (SETSID != null && !onPath(command.getFirst())) throw new IOException("cannot run " + command.getFirst() + ": no such program");
        // --wait: should setsid have to fork (it runs as a group leader), it waits and passes the exit status on;
        // normally it simply execs the command in place, keeping the pid we hold.
        if (SETSID != null) cmd.addAll(List.of(SETSID, "--wait"));
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        if (options.workDir() != null) pb.directory(options.workDir().toFile());
        long start = System.nanoTime();
        Process p = pb.start();
        ProcessHandle handle = p.toHandle();
        RUNNING.add(handle);
        TailBuffer out = new TailBuffer(options.outputLimitBytes());
        Thread reader = Thread.ofPlatform().daemon().name("child-output-" + p.pid()).start(() -> out.drain(p.getInputStream()));
        try {
            boolean exited;
            try {
                exited = p.waitFor(options.timeout().toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                terminate(p, options.killGrace());
                reader.join(1000);
                throw e;
            }
            if (!exited) {
                terminate(p, options.killGrace());
                reader.join(1000);
                Result partial = new Result(-1, out.text(), out.truncated(), Duration.ofNanos(System.nanoTime() - start));
                throw new TimeoutException(String.join(" ", command) + " ran longer than " + seconds(options.timeout()) + " and was killed", partial);
            }
            // A normal exit: anything it left running in its group goes too. (With no member left the group id is
            // free again; a new process would have to take that pid and make itself a group leader within these
            // few milliseconds for the signal to reach it.)
            killTree(handle, "KILL");
            reader.join(Math.max(1, options.killGrace().toMillis()));
            return new Result(p.exitValue(), out.text(), out.truncated(), Duration.ofNanos(System.nanoTime() - start));
        } finally {
            RUNNING.remove(handle);
            if (p.isAlive()) p.destroyForcibly(); // only on an unexpected error above
        }
    }

    /** {@code 300 s}, {@code 1500 ms}: a timeout as limits and messages write it. */
    public static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /** SIGTERM to the group, SIGKILL to what is left after the grace period; waits for the leader to be reaped. */
    private static void terminate(Process p, Duration grace) {
        ProcessHandle h = p.toHandle();
        killTree(h, "TERM");
        boolean gone;
        try {
            gone = p.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // keep the caller's interrupt; kill hard below anyway
            gone = false;
        }
        // Even when the leader went quietly, a child of it may ignore SIGTERM: SIGKILL the group regardless.
        killTree(h, "KILL");
        if (!gone) {
            boolean interrupted = Thread.interrupted();
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            } finally {
                if (interrupted) Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Signals the process group led by {@code leader} (with setsid its pgid is its pid; the group outlives the
     * leader while any member lives), then every descendant still parented under it, then the leader.
     */
    private static void killTree(ProcessHandle leader, String signal) {
        List<ProcessHandle> tree = leader.descendants().toList();
        if (SETSID != null) signalGroup(leader.pid(), signal);
        for (ProcessHandle d : tree) {
            if (signal.equals("KILL")) d.destroyForcibly();
            else d.destroy();
        }
        if (signal.equals("KILL")) leader.destroyForcibly();
        else leader.destroy();
    }

    /**
     * {@code kill -SIG -- -PGID}. Java has no API for a process group, and the group is the only handle on
     * members that left the tree; the kill(1) program is the portable way (a few milliseconds).
     */
    private static void signalGroup(long pgid, String signal) {
        try {
            Process k = new ProcessBuilder("kill", "-s", signal, "--", "-" + pgid).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            boolean interrupted = false;
            while (true) {
                try {
                    k.waitFor(5, TimeUnit.SECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // finish killing first; the caller sees the interrupt afterwards
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        } catch (IOException e) {
            // no kill(1): the descendants walk in killTree still reaches the tree
        }
    }

    private static boolean onPath(String program) {
        if (program.contains("/")) return Files.isExecutable(Path.of(program));
        String path = System.getenv("PATH");
        if (path == null) return true; // let the start fail as it will
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) return true;
        }
        return false;
    }

    private static String findSetsid() {
        if (System.getProperty("os.name", "").toLowerCase().contains("win")) return null;
        for (String dir : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            Path p = Path.of(dir, "setsid");
            if (Files.isExecutable(p)) return p.toString();
        }
        return null;
    }

    /** The last {@code limit} bytes of a stream, read until EOF (the pipe closes when the last writer dies). */
    private static final class TailBuffer {
        private final int limit;
        private final byte[] ring;
        private long total;

        TailBuffer(int limit) {
            this.limit = limit;
            this.ring = new byte[limit];
        }

        void drain(InputStream in) {
            byte[] buf = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buf)) > 0) append(buf, n);
            } catch (IOException e) {
                // the stream closes when the process is destroyed: what was read so far is kept
            }
        }

        private synchronized void append(byte[] buf, int n) {
            if (limit > 0) {
                for (int i = Math.max(0, n - limit); i < n; i++) ring[(int) ((total + i) % limit)] = buf[i];
            }
            total += n;
        }

        synchronized boolean truncated() {
            return total > limit;
        }

        synchronized String text() {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            if (total <= limit) {
                b.write(ring, 0, (int) total);
            } else {
                int start = (int) (total % limit);
                b.write(ring, start, limit - start);
                b.write(ring, 0, start);
            }
            return b.toString(StandardCharsets.UTF_8);
        }
    }
}
