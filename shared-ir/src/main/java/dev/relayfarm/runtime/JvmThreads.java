package dev.relayfarm.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time of this JVM's JIT compiler threads, read from Linux's {@code /proc/self/task}, and a wait for them to fall
 * idle before a benchmark times anything ({@link #awaitIdle}).
 * A model compiled in the process leaves the JIT compiling the compiler's own methods for seconds after: on 2 cores a
 * compiler thread takes a core from whichever engine runs, and an engine driven from Java (the VM's instruction loop)
 * runs interpreted until its turn comes. The compilation MXBean counts a compilation only once it ends, so a long C2
 * compile looked idle while it took a core.
 */
public final class JvmThreads {
    private JvmThreads() {}

    /**
     * The JIT compilers' thread names ("C2 CompilerThread0", which Linux cuts to 15 characters). Not the collector's
     * threads: the runs that settling makes may well collect every half second themselves, and would then never see a
     * quiet window; the garbage compiling left behind goes in the full collection before the wait.
     */
    private static final java.util.regex.Pattern COMPILER = java.util.regex.Pattern.compile("C[12] CompilerThre.*");

    /**
     * User plus system clock ticks of the compiler threads so far, or -1 where {@code /proc} cannot tell (not Linux):
     * then nothing waits.
     */
    public static long busyTicks() {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) return -1;
        long ticks = 0;
        try (Stream<Path> all = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) all::iterator) {
                try {
                    if (COMPILER.matcher(Files.readString(task.resolve("comm")).strip()).matches()) {
                        ticks += cpuTicks(Files.readString(task.resolve("stat")));
                    }
                } catch (IOException e) {
                    // the thread ended between the listing and the read: its ticks no longer change
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return ticks;
    }

    /** How long the compiler threads must have been idle, and the most {@link #awaitIdle} waits. */
    public static final long QUIET_MS = 500, LIMIT_MS = 30_000;

    /**
     * Runs {@code work} (untimed runs of the engines to be timed, so their own code is compiled too) after a full
     * collection, again and again until the compiler threads have used no CPU for {@link #QUIET_MS}, or {@link #LIMIT_MS}
     * passed (then the round under way ends first); not at all where {@code /proc} cannot tell. Returns how often it ran
     * {@code work}.
     */
    public static int awaitIdle(Runnable work) {
        System.gc();
        long start = System.nanoTime(), quietSince = start, busy = busyTicks();
        int rounds = 0;
        while (busy >= 0 && System.nanoTime() - start < LIMIT_MS * 1_000_000) {
            work.run();
            rounds++;
            long now = System.nanoTime(), b = busyTicks();
            if (b != busy) {
                busy = b;
                quietSince = now;
            } else if (now - quietSince >= QUIET_MS * 1_000_000) {
                break;
            }
        }
        return rounds;
    }

    /** utime + stime of one {@code stat} line: fields 14 and 15, counted after the parenthesised name (which may hold spaces). */
    static long cpuTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
