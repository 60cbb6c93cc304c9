package dev.relayfarm.process;

import java.util.List;

/**
 * A JVM that exits while a {@link ChildProcess} runs (as a service's JVM does when stopped mid-compile): starts
 * {@code sh} with a background {@code sleep} and an orphaned one, prints the script's pid, then exits. Run by
 * {@link ChildProcessTest#aJvmExitKillsRunningChildren}.
 */
public final class ExitWhileChildRuns {
    public static void main(String[] args) throws Exception {
        String marker = args[0];
        Thread t = Thread.ofPlatform().daemon().start(() -> {
            try {
                ChildProcess.run(List.of("sh", "-c", "sleep " + marker + " & (sleep " + marker + " &); wait"), ChildProcess.Options.DEFAULT);
            } catch (Exception e) {
                // the JVM is going away
            }
        });
        long end = System.nanoTime() + 10_000_000_000L;
        while (Processes.live(p -> p.cmdline().startsWith("sleep " + marker)).size() < 2 && System.nanoTime() < end) Thread.sleep(20);
        System.out.println("started " + Processes.live(p -> p.cmdline().startsWith("sleep " + marker)).size());
        System.out.flush();
        System.exit(0);
    }
}
