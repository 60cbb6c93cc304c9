package dev.relayfarm.kernel.codegen;

import dev.relayfarm.kernel.target.Target;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Builds C sources into shared libraries with the system C compiler, caching by content hash: the key
 * is the SHA-256 of the compiler's identity, the flags and the source, so an unchanged kernel is
 * compiled once per machine ({@code <cache>/<hash>.so}, next to its {@code .c} for debugging).
 *
 * <p>The compiler is {@code $CC} when set, else the first of {@code cc}, {@code gcc}, {@code clang}
 * that answers {@code --version}. The cache lives in {@code -Drelayfarm.kernel.cache=DIR}, else
 * {@code $RELAYFARM_KERNEL_CACHE}, else {@code <java.io.tmpdir>/relayfarm-kernels-<user>}.
 */
public final class CCompiler {
    /**
     * Default flags: host CPU features, OpenMP's simd pragmas without its runtime (threads are
     * {@link ParallelRuntime}'s), POSIX threads, position-independent shared object. {@code -std=c99}
     * alone turns off floating-point contraction (ISO mode), so every {@code acc + a * b} of a
     * convolution or dense tile would be a multiply and an add: {@code -ffp-contract=fast} lets the
     * compiler use FMA (half the instructions, one rounding instead of two).
     */
    public static final List<String> DEFAULT_FLAGS = List.of("-O3", "-march=native", "-ffp-contract=fast", "-fopenmp-simd", "-pthread", "-shared", "-fPIC", "-std=c99",
            "-Werror=implicit-function-declaration");

    private final String compiler;
    private final String identity;
    private final List<String> flags;
    private final Path cacheDir;

    private CCompiler(String compiler, String identity, List<String> flags, Path cacheDir) {
        this.compiler = compiler;
        this.identity = identity;
        this.flags = List.copyOf(flags);
        this.cacheDir = cacheDir;
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
            if (version.isPresent()) return Optional.of(new CCompiler(c, version.get(), flags, defaultCache()));
        }
        return Optional.empty();
    }

    public CCompiler withFlags(List<String> newFlags) {
        return new CCompiler(compiler, identity, newFlags, cacheDir);
    }

    /** The same compiler and flags with its library cache in {@code dir} (tests, throwaway builds). */
    public CCompiler withCache(Path dir) {
        return new CCompiler(compiler, identity, flags, dir);
    }

    /**
     * The same compiler identity (so the same cache keys), flags and cache, run through {@code command}:
     * a wrapper such as ccache, or a script that watches the builds in a test.
     */
    public CCompiler withCommand(String command) {
        return new CCompiler(command, identity, flags, cacheDir);
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
            if (version.isPresent()) return Optional.of(new CCompiler(c, version.get(), DEFAULT_FLAGS, defaultCache()));
        }
        return Optional.empty();
    }

    /** The first line of {@code compiler --version}; empty if it is not installed or fails. Interrupted: throws. */
    static Optional<String> version(String compiler) {
        try {
            Process p = new ProcessBuilder(compiler, "--version").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) return Optional.empty();
            return Optional.of(text.lines().findFirst().orElse(compiler));
        } catch (IOException e) {
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
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update((identity + "\0" + String.join(" ", flags) + "\0").getBytes(StandardCharsets.UTF_8));
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
        String key = hash(source);
        Path so = cacheDir.resolve(key + ".so");
        if (Files.isRegularFile(so)) return so;
        try {
            Files.createDirectories(cacheDir);
            // Source and library get private names, renamed into place when done: two threads building
            // the same source at once must not truncate the .c the other's compiler is reading (that
            // once cached a library with no symbols), nor see half a .so.
            Path c = Files.createTempFile(cacheDir, key + "-", ".c");
            Files.writeString(c, source);
            Path tmp = Files.createTempFile(cacheDir, key, ".so.tmp");
            List<String> cmd = new ArrayList<>();
            cmd.add(compiler);
            cmd.addAll(flags);
            cmd.addAll(List.of("-o", tmp.toString(), c.toString(), "-lm"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new CompileException("C compiler timed out after 300 s on " + c);
            }
            if (p.exitValue() != 0) {
                Files.deleteIfExists(tmp);
                throw new CompileException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "):\n" + log);
            }
            moveIntoPlace(c, cacheDir.resolve(key + ".c"));
            moveIntoPlace(tmp, so);
            return so;
        } catch (IOException e) {
            throw new CompileException("cannot build kernel library in " + cacheDir + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompileException("interrupted while compiling " + key);
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
