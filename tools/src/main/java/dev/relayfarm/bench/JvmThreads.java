package dev.relayfarm.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time of this JVM's own background threads (JIT compilers, garbage collectors), read from Linux's
 * {@code /proc/self/task}: what {@link SideBySide#settle} waits to fall idle before it times anything. The
 * compilation MXBean counts a compilation only once it ends, so a long C2 compile looked idle while it took a core.
 */
final class JvmThreads {
    private JvmThreads() {}

    /** Thread names (as Linux truncates them to 15 characters) of the JIT compilers and G1's collector threads. */
    private static final String[] BACKGROUND = {"C1 CompilerThre", "C2 CompilerThre", "GC Thread", "G1 "};

    /**
     * User plus system clock ticks of the background threads so far, or -1 where {@code /proc} cannot tell (not Linux):
     * then nothing waits.
     */
    static long busyTicks() {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) return -1;
        long ticks = 0;
        try (Stream<Path> all = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) all::iterator) {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    boolean background = false;
                    for (String prefix : BACKGROUND) background |= comm.startsWith(prefix);
                    if (background) ticks += cpuTicks(Files.readString(task.resolve("stat")));
                } catch (IOException e) {
                    // the thread ended between the listing and the read: its ticks no longer change
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return ticks;
    }

    /** utime + stime of one {@code stat} line: fields 14 and 15, counted after the parenthesised name (which may hold spaces). */
    static long cpuTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
