package dev.relayfarm.tuning.measure;

import dev.relayfarm.process.ChildProcess;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Runs one measurement program confined, so that a kernel that crashes, hangs or allocates without end costs a
 * {@link dev.relayfarm.tuning.MeasureError}, never the tuner:
 * <ul>
 *   <li>a {@link ChildProcess}: its own process group (setsid), stdin {@code /dev/null}, no descriptors beyond
 *       stdio inherited, killed with the whole group at the wall-clock limit;</li>
 *   <li>rlimits set on the child before it execs the program: {@code RLIMIT_AS} (address space) to the memory
 *       limit, {@code RLIMIT_CORE} 0 (a crash leaves no core file behind). Through util-linux {@code prlimit} when
 *       installed (it sets the limits on itself, then execs the program: same pid, the signal that kills the program
 *       is the exit status Java sees), else {@code sh -c 'ulimit -v …; ulimit -c 0; exec …'} (the same, through
 *       the shell's builtin);</li>
 *   <li>its own temporary directory as working directory (where its outputs are written), deleted afterwards.</li>
 * </ul>
 * Not a security boundary (same user, no namespaces): it contains accidents of generated code, not an attacker.
 */
final class Sandbox {
    /** What one run gave. */
    sealed interface Run {
        /** It exited (a signal is {@code 128 + signal}, as Java reports it); {@code file} is the result file if written. */
        record Exited(int exitCode, String log, Optional<byte[]> file) implements Run {}

        /** It ran past the limit and its process group was killed. */
        record TimedOut(String log, Duration limit) implements Run {}
    }

    /** How the limits are applied here: prlimit when installed, else the shell. */
    private static final String PRLIMIT = find("prlimit");

    private final Path workRoot;
    private final Duration timeout;
    private final long memoryLimitBytes;

    Sandbox(Path workRoot, Duration timeout, long memoryLimitBytes) {
        this.workRoot = workRoot;
        this.timeout = timeout;
        this.memoryLimitBytes = memoryLimitBytes;
    }

    /** Which mechanism sets the rlimits ({@code prlimit} or {@code sh ulimit}), for reports. */
    static String limitMechanism() {
        return PRLIMIT != null ? "prlimit" : "sh ulimit";
    }

    /**
     * Runs {@code program} with the arguments {@code arguments} makes from the path of the result file (in the
     * run's own directory), and reads that file back when the program wrote it.
     *
     * @throws InterruptedException the caller was interrupted (the process group is dead)
     */
    Run run(Path program, Function<Path, List<String>> arguments, String resultFile) throws InterruptedException {
        Path dir = null;
        try {
            Files.createDirectories(workRoot);
            dir = Files.createTempDirectory(workRoot, "candidate-");
            Path result = dir.resolve(resultFile);
            List<String> cmd = confined(program, arguments.apply(result));
            ChildProcess.Options opts = ChildProcess.Options.DEFAULT.withTimeout(timeout).withWorkDir(dir);
            try {
                ChildProcess.Result r = ChildProcess.run(cmd, opts);
                Optional<byte[]> file = Files.isRegularFile(result) ? Optional.of(Files.readAllBytes(result)) : Optional.empty();
                return new Run.Exited(r.exitCode(), r.log(), file);
            } catch (ChildProcess.TimeoutException e) {
                return new Run.TimedOut(e.partial().log(), timeout);
            }
        } catch (IOException e) {
            // not the candidate's fault: no temp space, no prlimit/sh to start
            throw new UncheckedIOException("cannot run measurement program " + program + ": " + e.getMessage(), e);
        } finally {
            deleteTree(dir);
        }
    }

    private List<String> confined(Path program, List<String> args) {
        List<String> cmd = new ArrayList<>();
        if (PRLIMIT != null) {
            cmd.addAll(List.of(PRLIMIT, "--as=" + memoryLimitBytes, "--core=0", "--", program.toString()));
        } else {
            // "$0" "$@": the program and its arguments pass through the shell unquoted-safe
            cmd.addAll(List.of("sh", "-c", "ulimit -v " + Math.max(1, memoryLimitBytes / 1024) + " && ulimit -c 0 && exec \"$0\" \"$@\"", program.toString()));
        }
        cmd.addAll(args);
        return cmd;
    }

    private static void deleteTree(Path dir) {
        if (dir == null) return;
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            // a leftover directory in the temp dir is harmless; the measurement is what the caller needs
        }
    }

    private static String find(String program) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(List.of("/usr/bin", "/bin"));
        if (path != null) dirs.addAll(0, List.of(path.split(File.pathSeparator)));
        for (String d : dirs) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) return Path.of(d, program).toString();
        }
        return null;
    }
}
