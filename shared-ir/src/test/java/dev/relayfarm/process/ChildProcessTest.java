package dev.relayfarm.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real processes, really killed: each test starts shell scripts that start {@code sleep 1000} children (in the
 * background, and re-parented to init through a subshell that exits), then checks in /proc that nothing of them
 * is left running.
 */
class ChildProcessTest {
    static final ChildProcess.Options ONE_SECOND = ChildProcess.Options.DEFAULT.withTimeout(Duration.ofSeconds(1));

    @BeforeAll
    static void posix() {
        Assumptions.assumeTrue(Processes.available() && ChildProcess.isolatesGroups(), "needs /proc and setsid: skipped");
    }

    /** The pids a script printed, one per line ("pid N"). */
    static List<Long> pids(String output) {
        List<Long> out = new ArrayList<>();
        for (String l : output.lines().toList()) if (l.startsWith("pid ")) out.add(Long.parseLong(l.substring(4).trim()));
        return out;
    }

    // the script's own pid (the group id), a background child, and an orphan: its subshell exits at once, so
    // ProcessHandle.descendants() no longer sees it; only the process group reaches it
    static final String SPAWN = "echo pid $$; sleep 1000 & echo pid $!; (sleep 1000 & echo pid $!); ";

    @Test
    void aTimeoutKillsTheWholeGroupIncludingOrphans() throws Exception {
        long t0 = System.nanoTime();
        var e = assertThrows(ChildProcess.TimeoutException.class, () -> ChildProcess.run(List.of("sh", "-c", SPAWN + "wait"), ONE_SECOND));
        double s = (System.nanoTime() - t0) / 1e9;
        assertTrue(s < 6, "killed at the 1 s timeout, returned after " + s + " s");
        assertTrue(e.getMessage().contains("ran longer than 1 s"), e.getMessage());
        List<Long> pids = pids(e.partial().output());
        assertEquals(3, pids.size(), e.partial().output());
        assertTrue(Processes.within(5000, () -> Processes.inGroup(pids.getFirst()).isEmpty()), () -> "survivors in the group: " + Processes.inGroup(pids.getFirst()));
        for (long pid : pids) assertFalse(Processes.alive(pid), "pid " + pid + " survived");
    }

    @Test
    void anInterruptKillsTheGroupWithinASecond() throws Exception {
        // a duration no other test uses marks this test's sleeps in the process list
        String marked = "sleep 1000.417";
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                ChildProcess.run(List.of("sh", "-c", SPAWN.replace("sleep 1000", marked) + "wait"), ChildProcess.Options.DEFAULT);
            } catch (Throwable e) {
                thrown.set(e);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        assertTrue(Processes.within(5000, () -> Processes.live(p -> p.cmdline().startsWith(marked)).size() == 2), "children started");
        List<Long> sleepers = Processes.live(p -> p.cmdline().startsWith(marked));
        long t0 = System.nanoTime();
        t.interrupt();
        t.join(5000);
        double s = (System.nanoTime() - t0) / 1e9;
        assertFalse(t.isAlive());
        assertTrue(s < 5, "returned " + s + " s after the interrupt"); // about 0.5 s (SIGTERM, then SIGKILL); 5 s for a loaded CI machine
        assertInstanceOf(InterruptedException.class, thrown.get());
        assertFalse(flagAfter.get(), "InterruptedException clears the flag, as usual");
        assertTrue(Processes.within(5000, () -> sleepers.stream().noneMatch(Processes::alive)), "sleep children killed: " + sleepers);
    }

    @Test
    void whatAChildLeavesBehindAfterANormalExitIsKilled() throws Exception {
        ChildProcess.Result r = ChildProcess.run(List.of("sh", "-c", "sleep 1000 > /dev/null & echo pid $!; exit 3"), ONE_SECOND);
        assertEquals(3, r.exitCode());
        long sleeper = pids(r.output()).getFirst();
        assertTrue(Processes.within(5000, () -> !Processes.alive(sleeper)), "the background sleep was killed");
    }

    @Test
    void outputIsReadWhileTheChildRunsAndOnlyItsEndIsKept() throws Exception {
        // 4 MB through the pipe (far more than its 64 KB buffer: a child that blocks on a full pipe would time out)
        ChildProcess.Options small = new ChildProcess.Options(Duration.ofSeconds(20), 1000, Duration.ofMillis(200), null);
        ChildProcess.Result r = ChildProcess.run(List.of("sh", "-c", "i=0; yes 0123456789 | head -c 4000000; echo; echo the end >&2"), small);
        assertEquals(0, r.exitCode());
        assertTrue(r.outputTruncated());
        assertEquals(1000, r.output().length());
        assertTrue(r.output().endsWith("\nthe end\n"), r.output());
        assertTrue(r.log().startsWith("[... earlier output dropped ...]"));
    }

    @Test
    void onlyStdioIsInherited() throws Exception {
        // the JVM holds dozens of descriptors (jars, sockets); the child sees 0, 1, 2 and the one ls opens for the listing
        ChildProcess.Result r = ChildProcess.run(List.of("ls", "/proc/self/fd"), ONE_SECOND);
        List<String> fds = r.output().lines().toList();
        assertTrue(List.of("0", "1", "2", "3").containsAll(fds), "inherited: " + fds);
        ChildProcess.Result stdin = ChildProcess.run(List.of("sh", "-c", "cat; echo done"), ONE_SECOND);
        assertEquals("done\n", stdin.output(), "stdin is /dev/null: cat ends at once");
    }

    @Test
    void aJvmExitKillsRunningChildren() throws Exception {
        String marker = "1000.733";
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        Process jvm = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), ExitWhileChildRuns.class.getName(), marker)
                .redirectErrorStream(true).start();
        String out = new String(jvm.getInputStream().readAllBytes());
        assertTrue(jvm.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(out.contains("started 2"), out);
        // the shutdown hook killed the group on the way out: neither the child nor the orphan outlives the JVM
        assertTrue(Processes.within(5000, () -> Processes.live(p -> p.cmdline().startsWith("sleep " + marker)).isEmpty()),
                () -> "survived the JVM: " + Processes.live(p -> p.cmdline().startsWith("sleep " + marker)));
    }

    @Test
    void aMissingProgramIsAnIOException() {
        var e = assertThrows(java.io.IOException.class, () -> ChildProcess.run(List.of("/nonexistent/relayfarm-no-such-program"), ONE_SECOND));
        assertFalse(e instanceof ChildProcess.TimeoutException);
    }
}
