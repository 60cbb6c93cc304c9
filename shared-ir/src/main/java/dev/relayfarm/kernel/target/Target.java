package dev.relayfarm.kernel.target;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A code generation target, parsed from a TVM-style target string:
 *
 * <pre>
 *   c -mcpu=native                                  the machine we run on (features from /proc/cpuinfo)
 *   c -mcpu=x86-64-v3                               a named CPU or micro-architecture level
 *   c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72   cross compilation
 *   c -mcpu=x86-64-v2 -mattr=+avx2,+fma             features added (+) or removed (-) by name
 * </pre>
 *
 * <p>The first token is the backend kind (only {@code c} exists). Options may come in any order, each
 * at most once. The parsed target is a value: two strings meaning the same thing give equal targets
 * and the same {@link #toString()}, which is what artifacts record.
 *
 * <p>{@code features()} is what kernels may assume (the vector ISA: {@code avx2}, {@code avx512f},
 * {@code fma}, {@code neon}, ...). For {@code -mcpu=native} it is what this machine reports, so an
 * artifact built for native is meant for this machine; use a named CPU for portable artifacts.
 */
public record Target(String kind, Arch arch, String triple, String cpu, Set<String> features, List<String> attrs) {
    /** The instruction set families we generate code for. */
    public enum Arch {
        X86_64, AARCH64;

        static Arch ofTriple(String triple, String token) {
            String a = triple.split("-", 2)[0];
            return switch (a) {
                case "x86_64", "amd64" -> X86_64;
                case "aarch64", "arm64" -> AARCH64;
                default -> throw new TargetException("unsupported architecture '" + a + "' in " + token + " (supported: x86_64, aarch64)");
            };
        }
    }

    public Target {
        features = Collections.unmodifiableSet(new TreeSet<>(features));
        attrs = List.copyOf(attrs);
    }

    // x86-64 micro-architecture levels (psABI), cumulative; the feature names are /proc/cpuinfo's (and gcc's -m<name>).
    private static final List<String> X86_V1 = List.of("sse", "sse2");
    private static final List<String> X86_V2 = List.of("ssse3", "sse4_1", "sse4_2", "popcnt");
    private static final List<String> X86_V3 = List.of("avx", "avx2", "fma", "f16c", "bmi1", "bmi2");
    private static final List<String> X86_V4 = List.of("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl");

    private static List<String> levels(int n) {
        List<String> out = new ArrayList<>(X86_V1);
        if (n >= 2) out.addAll(X86_V2);
        if (n >= 3) out.addAll(X86_V3);
        if (n >= 4) out.addAll(X86_V4);
        return out;
    }

    /** Named CPUs we know the vector features of; the level is all that kernels care about. */
    private static final Map<String, List<String>> X86_CPUS = Map.ofEntries(
            Map.entry("x86-64", levels(1)),
            Map.entry("x86-64-v2", levels(2)),
            Map.entry("x86-64-v3", levels(3)),
            Map.entry("x86-64-v4", levels(4)),
            Map.entry("haswell", levels(3)),
            Map.entry("skylake", levels(3)),
            Map.entry("znver2", levels(3)),
            Map.entry("znver3", levels(3)),
            Map.entry("skylake-avx512", levels(4)),
            Map.entry("cascadelake", levels(4)),
            Map.entry("icelake-server", levels(4)),
            Map.entry("znver4", levels(4)));

    private static final Map<String, List<String>> AARCH64_CPUS = Map.ofEntries(
            Map.entry("generic", List.of("neon")),
            Map.entry("cortex-a53", List.of("neon")),
            Map.entry("cortex-a55", List.of("neon", "fp16", "dotprod")),
            Map.entry("cortex-a72", List.of("neon")),
            Map.entry("cortex-a76", List.of("neon", "fp16", "dotprod")),
            Map.entry("neoverse-n1", List.of("neon", "fp16", "dotprod")),
            Map.entry("neoverse-v1", List.of("neon", "fp16", "dotprod", "sve")),
            Map.entry("apple-m1", List.of("neon", "fp16", "dotprod")));

    /** The target string of the machine we run on; the farm's and relayc's default ({@code CompileRequest.DEFAULT_TARGET}). */
    public static final String HOST = "c -mcpu=native";

    /** The target of the machine we run on: {@link #HOST}. */
    public static Target host() {
        return HostHolder.TARGET;
    }

    private static final class HostHolder {
        static final Target TARGET = parse(HOST);
    }

    /**
     * Parses a target string. Errors ({@link TargetException}) name the offending token: an unknown
     * kind, option, CPU, architecture or a repeated option.
     */
    public static Target parse(String text) {
        if (text == null || text.isBlank()) throw new TargetException("empty target string (expected e.g. \"c -mcpu=native\")");
        String[] tokens = text.trim().split("\\s+");
        String kind = tokens[0];
        if (!kind.equals("c")) {
            throw new TargetException("unknown target kind '" + kind + "' in \"" + text.trim() + "\" (supported: c)");
        }
        String cpu = null;
        String triple = null;
        List<String> attrs = new ArrayList<>();
        boolean sawAttr = false;
        for (int i = 1; i < tokens.length; i++) {
            String tok = tokens[i];
            int eq = tok.indexOf('=');
            String key = eq < 0 ? tok : tok.substring(0, eq);
            String value = eq < 0 ? "" : tok.substring(eq + 1);
            switch (key) {
                case "-mcpu", "-mtriple", "-mattr" -> {
                    if (value.isEmpty()) throw new TargetException("option '" + tok + "' needs a value (" + key + "=...) in \"" + text.trim() + "\"");
                    boolean repeated = switch (key) {
                        case "-mcpu" -> cpu != null;
                        case "-mtriple" -> triple != null;
                        default -> sawAttr;
                    };
                    if (repeated) throw new TargetException("option " + key + " given twice ('" + tok + "') in \"" + text.trim() + "\"");
                    switch (key) {
                        case "-mcpu" -> cpu = value;
                        case "-mtriple" -> triple = value;
                        default -> {
                            sawAttr = true;
                            for (String a : value.split(",")) {
                                if (a.length() < 2 || (a.charAt(0) != '+' && a.charAt(0) != '-')) {
                                    throw new TargetException("bad feature '" + a + "' in '" + tok + "' (expected +name or -name)");
                                }
                                attrs.add(a.toLowerCase(Locale.ROOT));
                            }
                        }
                    }
                }
                default -> throw new TargetException("unknown target option '" + tok + "' in \"" + text.trim() + "\" (supported: -mcpu=, -mtriple=, -mattr=)");
            }
        }
        String hostTriple = hostTriple();
        if (triple == null) triple = hostTriple;
        Arch arch = Arch.ofTriple(triple, "'-mtriple=" + triple + "'");
        if (cpu == null) cpu = defaultCpu(arch, triple.equals(hostTriple));
        TreeSet<String> features = new TreeSet<>();
        if (cpu.equals("native")) {
            if (!triple.equals(hostTriple)) {
                throw new TargetException("'-mcpu=native' cannot be used with the cross triple '-mtriple=" + triple + "' (this machine is " + hostTriple + "); name a CPU");
            }
            features.addAll(hostFeatures());
        } else {
            Map<String, List<String>> table = arch == Arch.X86_64 ? X86_CPUS : AARCH64_CPUS;
            List<String> known = table.get(cpu);
            if (known == null) {
                throw new TargetException("unknown CPU '-mcpu=" + cpu + "' for " + arch.name().toLowerCase(Locale.ROOT) + " (known: native, " + String.join(", ", new TreeSet<>(table.keySet())) + ")");
            }
            features.addAll(known);
        }
        for (String a : attrs) {
            if (a.charAt(0) == '+') features.add(a.substring(1));
            else features.remove(a.substring(1));
        }
        return new Target(kind, arch, triple, cpu, features, attrs);
    }

    private static String defaultCpu(Arch arch, boolean host) {
        if (host) return "native";
        return arch == Arch.X86_64 ? "x86-64" : "generic";
    }

    /** The GNU triple of this machine, from the JVM's {@code os.arch} (Linux assumed for the OS part). */
    public static String hostTriple() {
        String a = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return switch (a) {
            case "amd64", "x86_64" -> "x86_64-linux-gnu";
            case "aarch64", "arm64" -> "aarch64-linux-gnu";
            default -> a + "-linux-gnu";
        };
    }

    /** The vector features this machine reports in /proc/cpuinfo (x86 "flags", ARM "Features"); empty where it cannot be read. */
    public static Set<String> hostFeatures() {
        return HostFeatures.FEATURES;
    }

    private static final class HostFeatures {
        static final Set<String> FEATURES = read(Path.of("/proc/cpuinfo"));
    }

    /** The feature set in a /proc/cpuinfo text, named as {@link #features()} names them. */
    static Set<String> featuresFromCpuinfo(String cpuinfo) {
        TreeSet<String> out = new TreeSet<>();
        for (String line : cpuinfo.lines().toList()) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String key = line.substring(0, colon).trim();
            if (!key.equals("flags") && !key.equals("Features")) continue;
            for (String f : line.substring(colon + 1).trim().split("\\s+")) {
                if (f.isEmpty()) continue;
                switch (f) {
                    case "asimd" -> out.add("neon"); // ARMv8 calls NEON "asimd"
                    case "asimddp" -> out.add("dotprod");
                    case "fphp", "asimdhp" -> out.add("fp16");
                    case "abm" -> out.add("popcnt");
                    case "pni" -> out.add("sse3"); // the kernel's name for SSE3
                    default -> out.add(f);
                }
            }
            break; // every core lists the same flags
        }
        if (out.contains("bmi1") || out.contains("bmi")) {
            out.remove("bmi");
            out.add("bmi1");
        }
        return out;
    }

    private static Set<String> read(Path cpuinfo) {
        try {
            return Collections.unmodifiableSet(featuresFromCpuinfo(Files.readString(cpuinfo)));
        } catch (IOException | RuntimeException e) {
            return Set.of(); // not Linux or not readable: assume the architecture's baseline only
        }
    }

    public boolean hasFeature(String name) {
        return features.contains(name);
    }

    /**
     * Whether code for this target runs on this machine: same architecture and every feature it
     * assumes is present here. Artifacts for other targets can be emitted but not loaded.
     */
    public boolean isHost() {
        return triple.equals(hostTriple()) && hostFeatures().containsAll(featuresToCheck());
    }

    // Host detection can miss names the tables use (e.g. "sse" is always there on x86-64); check the vector ISA only.
    private Set<String> featuresToCheck() {
        TreeSet<String> out = new TreeSet<>();
        for (String f : features) {
            if (f.startsWith("avx") || f.equals("fma") || f.equals("neon") || f.equals("sve")) out.add(f);
        }
        return out;
    }

    /** Whether compiling for this target needs a cross compiler. */
    public boolean isCross() {
        return !triple.equals(hostTriple());
    }

    /** The widest vector register kernels may use, in bits (SSE2 and NEON guarantee 128). */
    public int vectorBits() {
        if (features.contains("avx512f")) return 512;
        if (features.contains("avx2") || features.contains("avx")) return 256;
        return 128;
    }

    /**
     * The vector width the blocked layouts' channel blocks are made of, in bits: the target's, at most 256 (SSE2
     * and NEON get 128). Most templates budget AVX2's register file (16 registers of 8 floats); the depthwise one
     * counts its tile in the target's registers ({@code kernel.template.Registers}), and the C compiler sees
     * {@code -march} either way.
     */
    public int scheduleVectorBits() {
        return Math.min(vectorBits(), 256);
    }

    /**
     * The channel block sizes of blocked layouts (NCHW[x]c), most preferred first: two float32 vectors of
     * {@link #scheduleVectorBits()}, then one, so a block is whole SIMD registers of the kernels' tiles.
     * AVX2 and AVX-512: 16, 8; SSE2 and NEON: 8, 4.
     */
    public List<Integer> channelBlocks() {
        int lanes = scheduleVectorBits() / 32;
        return List.of(2 * lanes, lanes);
    }

    /**
     * The target part of the C compiler's command line: {@code -march=} on x86 ({@code -march=native}
     * for native), {@code -mcpu=} on AArch64, and {@code -m<feature>}/{@code -mno-<feature>} for
     * {@code -mattr} changes on x86. Optimization, OpenMP and linking flags are the compiler's.
     */
    public List<String> compilerFlags() {
        List<String> flags = new ArrayList<>();
        switch (arch) {
            case X86_64 -> {
                flags.add("-march=" + cpu);
                for (String a : attrs) {
                    String name = gccFeature(a.substring(1));
                    flags.add(a.charAt(0) == '+' ? "-m" + name : "-mno-" + name);
                }
            }
            case AARCH64 -> {
                StringBuilder mcpu = new StringBuilder(cpu);
                for (String a : attrs) {
                    String name = a.substring(1).equals("neon") ? "simd" : a.substring(1);
                    mcpu.append('+').append(a.charAt(0) == '+' ? name : "no" + name);
                }
                flags.add("-mcpu=" + mcpu);
            }
        }
        return flags;
    }

    // /proc/cpuinfo and gcc spell a few features differently.
    private static String gccFeature(String f) {
        return switch (f) {
            case "sse4_1" -> "sse4.1";
            case "sse4_2" -> "sse4.2";
            case "bmi1" -> "bmi";
            default -> f;
        };
    }

    /** The cross C compilers to look for when {@link #isCross()} (GNU naming: {@code <triple>-gcc}); empty for the host. */
    public List<String> crossCompilerCandidates() {
        if (!isCross()) return List.of();
        return List.of(triple + "-gcc", triple + "-cc");
    }

    /** The canonical string: kind, then {@code -mtriple} (only when cross), {@code -mcpu}, {@code -mattr}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(kind);
        if (isCross()) sb.append(" -mtriple=").append(triple);
        sb.append(" -mcpu=").append(cpu);
        if (!attrs.isEmpty()) sb.append(" -mattr=").append(String.join(",", attrs));
        return sb.toString();
    }
}
