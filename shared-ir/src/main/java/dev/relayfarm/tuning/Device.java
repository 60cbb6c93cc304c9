package dev.relayfarm.tuning;

import dev.relayfarm.serde.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The hardware a kernel was measured on: its fingerprint (architecture, CPU model, the ISA extensions codegen can use,
 * the cores the measuring process may use) and the device class derived from it. Costs are comparable only within
 * one device class: a schedule tuned on one CPU is never applied on another by accident (ARCHITECTURE.md section 5;
 * the MetaSchedule database ignored this, apache/tvm#15549). The farm's {@code devices.device_class} holds the same
 * string.
 *
 * <p>The class reads {@code cpu-ARCH-ISALEVEL-Nc-HASH}, e.g. {@code cpu-x86_64-avx512-2c-3f9a2b1c}: the first parts
 * for people, the hash (8 hex digits of the SHA-256 of model, ISA flags and cores) so that two CPUs that share them
 * but differ in model or in one extension are two classes. Only ISA flags enter it, not the whole {@code flags}
 * line, whose other entries (bugs, hypervisor, power features) change with kernel versions on the same CPU.
 *
 * @param deviceClass the class as recorded (a record read back keeps the class it was measured under, even if the
 *                    derivation changes later)
 * @param isa         the ISA extensions, sorted
 * @param cores       {@link Runtime#availableProcessors()} where measured: a container's 2 CPUs of a 64-core host time
 *                    parallel kernels like a 2-core machine
 */
public record Device(String deviceClass, String arch, String model, List<String> isa, int cores) {
    /**
     * The device class where it is not known which device will run the code: the farm's codegen, whose
     * {@code schedules} rows have no device class yet (the target stands for it there). Only equal classes match,
     * so such schedules apply only where the device is unknown as well.
     */
    public static final String UNKNOWN_CLASS = "unknown";

    /** x86 flags that name instruction set extensions a C compiler may emit (prefixes of {@code /proc/cpuinfo} flags). */
    private static final List<String> X86_ISA = List.of("sse", "ssse3", "avx", "amx", "fma", "f16c", "bmi", "popcnt", "movbe", "adx", "gfni", "vaes",
            "vpclmulqdq", "sha_ni", "aes");
    private static volatile Device local;

    public Device {
        Objects.requireNonNull(deviceClass, "deviceClass");
        Objects.requireNonNull(arch, "arch");
        Objects.requireNonNull(model, "model");
        isa = List.copyOf(new TreeSet<>(isa));
        if (cores < 1) throw new IllegalArgumentException("a device has at least one core, got " + cores);
    }

    /** A fingerprint with its derived class. */
    public static Device of(String arch, String model, List<String> isa, int cores) {
        List<String> sorted = List.copyOf(new TreeSet<>(isa));
        String hash = Sha256.hex((model + "|" + String.join(" ", sorted) + "|" + cores).getBytes(StandardCharsets.UTF_8)).substring(0, 8);
        return new Device("cpu-" + arch + "-" + isaLevel(arch, sorted) + "-" + cores + "c-" + hash, arch, model, sorted, cores);
    }

    /** This machine, read once from {@code /proc/cpuinfo} (model and ISA "unknown"/none where there is none). */
    public static Device local() {
        Device d = local;
        if (d != null) return d;
        String cpuinfo;
        try {
            cpuinfo = Files.readString(Path.of("/proc/cpuinfo"));
        } catch (IOException e) {
            cpuinfo = "";
        }
        d = fromCpuinfo(cpuinfo, arch(System.getProperty("os.arch")), Runtime.getRuntime().availableProcessors());
        local = d;
        return d;
    }

    /**
     * The device {@code cpuinfo} (the text of {@code /proc/cpuinfo}) describes: the first processor's model and ISA
     * flags. x86 lists {@code model name} and {@code flags}; aarch64 lists {@code Features} and, for a model, often only
     * {@code CPU implementer}/{@code CPU part} (or {@code Hardware}).
     */
    public static Device fromCpuinfo(String cpuinfo, String arch, int cores) {
        String model = null, implementer = null, part = null, hardware = null;
        List<String> isa = new ArrayList<>();
        boolean flagsSeen = false;
        for (String line : cpuinfo.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String key = line.substring(0, colon).trim(), value = line.substring(colon + 1).trim();
            switch (key) {
                case "model name" -> { if (model == null) model = value; }
                case "CPU implementer" -> { if (implementer == null) implementer = value; }
                case "CPU part" -> { if (part == null) part = value; }
                case "Hardware" -> { if (hardware == null) hardware = value; }
                case "flags", "Features" -> {
                    if (flagsSeen) continue;
                    flagsSeen = true;
                    for (String f : value.split("\\s+")) if (!f.isEmpty() && isIsaFlag(arch, f)) isa.add(f);
                }
                default -> {}
            }
        }
        if (model == null) model = implementer != null ? "implementer " + implementer + " part " + part : hardware != null ? hardware : "unknown";
        return of(arch, model, isa, cores);
    }

    /** The JVM's {@code os.arch} as the toolchains name it ({@code amd64} is {@code x86_64}). */
    static String arch(String osArch) {
        return switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> osArch.toLowerCase(Locale.ROOT);
        };
    }

    private static boolean isIsaFlag(String arch, String flag) {
        if (!arch.equals("x86_64")) return true; // aarch64's Features are all ISA extensions
        for (String p : X86_ISA) if (flag.startsWith(p)) return true;
        return false;
    }

    /** The widest vector extension, the part of the class that decides most of a kernel's speed. */
    private static String isaLevel(String arch, List<String> isa) {
        List<String> order = arch.equals("x86_64") ? List.of("avx512f", "avx2", "avx", "sse4_2", "sse2") : List.of("sve2", "sve", "asimd");
        for (String level : order) if (isa.contains(level)) return level.equals("avx512f") ? "avx512" : level;
        return "base";
    }
}
