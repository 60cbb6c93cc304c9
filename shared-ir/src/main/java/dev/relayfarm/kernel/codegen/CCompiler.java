package dev.relayfarm.kernel.codegen;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.process.ChildProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Builds C sources into shared libraries with the system C compiler, caching by content hash: the key
 * is the SHA-256 of the compiler's identity, the flags and the source, so an unchanged kernel is
 * compiled once per machine ({@code <cache>/<hash>.so}, next to its {@code .c} for debugging).
 *
 * <p>The compiler is {@code $CC} when set, else the first of {@code cc}, {@code gcc}, {@code clang}
 * that answers {@code --version}. The cache lives in {@code -Drelayfarm.kernel.cache=DIR}, else
 * {@code $RELAYFARM_KERNEL_CACHE}, else {@code <java.io.tmpdir>/relayfarm-kernels-<user>}.
 *
 * <p>Each build runs as a {@link ChildProcess}: under a wall-clock limit ({@link #withTimeout}, default
 * {@link #DEFAULT_TIMEOUT}) and stopped, with every process it started, when the calling thread is interrupted;
 * its temporary files never stay in the cache after a failure.
 */
public final class CCompiler {
    /**
     * Default flags: host CPU features, OpenMP's simd pragmas without its runtime (threads are
     * {@link ParallelRuntime}'s), POSIX threads, position-independent shared object. {@code -std=c99}
     * alone turns off floating-point contraction (ISO mode), so every {@code acc + a * b} of a
     * convolution or dense tile would be a multiply and an add: {@code -ffp-contract=fast} lets the
     * compiler use FMA (half the instructions, one rounding instead of two). {@code -fno-math-errno}: a
     * {@code sqrtf} that may set {@code errno} (for a negative argument) is a branch and a library call
     * per element, which kept every loop with a square root scalar (LRN's normalization); nothing
     * reads {@code errno}, and the vector square root rounds exactly as the scalar one does.
     */
    public static final List<String> DEFAULT_FLAGS = List.of("-O3", "-march=native", "-ffp-contract=fast", "-fno-math-errno", "-fopenmp-simd", "-pthread", "-shared",
            "-fPIC", "-std=c99",
            "-Werror=implicit-function-declaration");

    /**
     * How long one build may take. Models within the farm's limits compile in seconds (a 100k-step chain in
     * about 10 s since the executor is table-driven); five minutes leaves room for a slow or loaded machine
     * and still frees a codegen thread from a runaway compile.
     */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(20);

    private final String compiler;
    private final String identity;
    private final List<String> flags;
    private final Path cacheDir;
    private final Duration timeout;

    private CCompiler(String compiler, String identity, List<String> flags, Path cacheDir, Duration timeout) {
        this.compiler = compiler;
        this.identity = identity;
        this.flags = List.copyOf(flags);
        this.cacheDir = cacheDir;
        this.timeout = timeout;
    }

    /** The outcome of the first completed probe (null before it): the PATH does not change under a running JVM. */
    private static volatile Optional<CCompiler> host;

    /**
     * The host compiler with the default flags and cache, if one is installed. Only a probe that ran to the end
     * is remembered: one cut short by an interrupt (a service stopping mid-compile) throws instead, and the next
     * call probes again, so "no compiler" is never recorded for a compiler that is there.
     */
    public static Optional<CCompiler> host() {
        Optional<CCompiler> h = host;
        if (h != null) return h;
        synchronized (CCompiler.class) {
            if (host == null) host = detect();
            return host;
        }
    }

    /**
     * A compiler for {@code target}: the host compiler with the target's {@code -march}/{@code -mcpu}
     * flags in place of {@code -march=native}, or for a cross target the first of its
     * {@link Target#crossCompilerCandidates()} installed here. Empty when none is installed.
     */
    public static Optional<CCompiler> forTarget(Target target) {
        List<String> flags = new ArrayList<>();
        for (String f : DEFAULT_FLAGS) {
            if (f.equals("-march=native")) flags.addAll(target.compilerFlags());
            else flags.add(f);
        }
        if (!target.isCross()) return host().map(c -> c.withFlags(flags));
        for (String c : target.crossCompilerCandidates()) {
            Optional<String> version = version(c);
            if (version.isPresent()) return Optional.of(new CCompiler(c, version.get(), flags, defaultCache(), DEFAULT_TIMEOUT));
        }
        return Optional.empty();
    }

    public CCompiler withFlags(List<String> newFlags) {
        return new CCompiler(compiler, identity, newFlags, cacheDir, timeout);
    }

    /** The same compiler and flags with its library cache in {@code dir} (tests, throwaway builds). */
    public CCompiler withCache(Path dir) {
        return new CCompiler(compiler, identity, flags, dir, timeout);
    }

    /**
     * The same compiler identity (so the same cache keys), flags and cache, run through {@code command}:
     * a wrapper such as ccache, or a script that watches the builds in a test.
     */
    public CCompiler withCommand(String command) {
        return new CCompiler(command, identity, flags, cacheDir, timeout);
    }

    /** The same compiler with builds killed after {@code limit} (wall clock); not part of the cache key. */
    public CCompiler withTimeout(Duration limit) {
        if (limit.isNegative() || limit.isZero()) throw new IllegalArgumentException("compile timeout must be positive, got " + limit);
        return new CCompiler(compiler, identity, flags, cacheDir, limit);
    }

    public Duration timeout() {
        return timeout;
    }

    public String command() {
        return compiler;
    }

    /** The compiler's first {@code --version} line (what artifacts record as the compiler version). */
    public String identity() {
        return identity;
    }

    public List<String> flags() {
        return flags;
    }

    private static Optional<CCompiler> detect() {
        List<String> candidates = new ArrayList<>();
        String cc = System.getenv("CC");
        if (cc != null && !cc.isBlank()) candidates.add(cc.trim());
        candidates.addAll(List.of("cc", "gcc", "clang"));
        for (String c : candidates) {
            Optional<String> version = version(c);
            if (version.isPresent()) return Optional.of(new CCompiler(c, version.get(), DEFAULT_FLAGS, defaultCache(), DEFAULT_TIMEOUT));
        }
        return Optional.empty();
    }

    /** The first line of {@code compiler --version}; empty if it is not installed or fails. Interrupted: throws. */
    static Optional<String> version(String compiler) {
        try {
            ChildProcess.Result r = ChildProcess.run(List.of(compiler, "--version"), ChildProcess.Options.DEFAULT.withTimeout(PROBE_TIMEOUT));
            if (r.exitCode() != 0) return Optional.empty();
            return Optional.of(r.output().lines().findFirst().orElse(compiler));
        } catch (IOException e) { // not installed, or hanging (the timeout)
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompileException("interrupted while asking " + compiler + " for its version", e);
        }
    }

    private static Path defaultCache() {
        String prop = System.getProperty("relayfarm.kernel.cache");
        if (prop != null && !prop.isBlank()) return Path.of(prop);
        String env = System.getenv("RELAYFARM_KERNEL_CACHE");
        if (env != null && !env.isBlank()) return Path.of(env);
        return Path.of(System.getProperty("java.io.tmpdir"), "relayfarm-kernels-" + System.getProperty("user.name", "user"));
    }

    /** The cache key of {@code source} under this compiler and flags. */
    public String hash(String source) {
        return hash(source, flags);
    }

    private String hash(String source, List<String> buildFlags) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update((identity + "\0" + String.join(" ", buildFlags) + "\0").getBytes(StandardCharsets.UTF_8));
            md.update(source.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(md.digest()).substring(0, 32);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    /**
     * The shared library built from {@code source}: from the cache when present, else compiled now.
     * Throws {@link CompileException} with the compiler's messages when the source does not compile.
     */
    public Path compile(String source) {
        return build(source, flags, ".so");
    }

    /**
     * An executable built from {@code source} (which has a {@code main}): this compiler's flags without
     * {@code -shared} and {@code -fPIC}, cached like libraries as {@code <hash>.bin}. The tuning runner builds its
     * measurement programs this way, so a crashing kernel takes down a child process, never the JVM.
     */
    public Path compileExecutable(String source) {
        List<String> exe = flags.stream().filter(f -> !f.equals("-shared")).toList(); // -fPIC kept: the code is built as the artifact builds it
        return build(source, exe, ".bin");
    }

    private Path build(String source, List<String> buildFlags, String suffix) {
        String key = hash(source, buildFlags);
        Path so = cacheDir.resolve(key + suffix);
        if (Files.isRegularFile(so)) return so;
        Path c = null;
        Path tmp = null;
        try {
            Files.createDirectories(cacheDir);
            // Source and library get private names, renamed into place when done: two threads building
            // the same source at once must not truncate the .c the other's compiler is reading (that
            // once cached a library with no symbols), nor see half a .so.
            c = Files.createTempFile(cacheDir, key + "-", ".c");
            Files.writeString(c, source);
            tmp = Files.createTempFile(cacheDir, key, suffix + ".tmp");
            List<String> cmd = new ArrayList<>();
            cmd.add(compiler);
            cmd.addAll(buildFlags);
            cmd.addAll(List.of("-o", tmp.toString(), c.toString(), "-lm"));
            ChildProcess.Result r = ChildProcess.run(cmd, ChildProcess.Options.DEFAULT.withTimeout(timeout));
            if (r.exitCode() != 0) throw new CompileException(String.join(" ", cmd) + " failed (exit " + r.exitCode() + "):\n" + r.log());
            moveIntoPlace(c, cacheDir.resolve(key + ".c"));
            c = null;
            moveIntoPlace(tmp, so);
            tmp = null;
            return so;
        } catch (ChildProcess.TimeoutException e) {
            throw new CompileException("C compiler timed out after " + ChildProcess.seconds(timeout) + " on a " + source.length() + "-character source (" + compiler
                    + "; limit: CCompiler.withTimeout, relayfarm.limits.compile-timeout in the farm) and was killed", e);
        } catch (IOException e) {
            throw new CompileException("cannot build kernel library in " + cacheDir + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompileException("interrupted while compiling " + key + " (the compiler was killed)", e);
        } finally {
            // every failure path: no half-written .c or .so.tmp stays in the cache
            deleteQuietly(c);
            deleteQuietly(tmp);
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) return;
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // a leftover temp file is harmless; the original failure is what the caller needs to see
        }
    }

    private static void moveIntoPlace(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
