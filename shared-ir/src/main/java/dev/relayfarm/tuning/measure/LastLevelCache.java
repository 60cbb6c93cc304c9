package dev.relayfarm.tuning.measure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The size of this machine's largest CPU cache, from Linux's sysfs ({@code /sys/devices/system/cpu/cpu0/cache/index*}),
 * and so how much a cache flush must write: twice that, so that with any replacement policy the kernel's data is gone.
 */
final class LastLevelCache {
    /** When sysfs does not say (another OS, a container hiding it): more than any current CPU's last level. */
    static final long FALLBACK_BYTES = 64L << 20;

    private LastLevelCache() {}

    /** Bytes a flush writes: twice the largest cache, at least 8 MiB. */
    static long flushBytes() {
        return Math.max(8L << 20, 2 * bytes());
    }

    static long bytes() {
        Path dir = Path.of("/sys/devices/system/cpu/cpu0/cache");
        if (!Files.isDirectory(dir)) return FALLBACK_BYTES;
        long max = 0;
        try (Stream<Path> levels = Files.list(dir)) {
            for (Path level : levels.filter(p -> p.getFileName().toString().startsWith("index")).toList()) {
                Path size = level.resolve("size");
                if (Files.isRegularFile(size)) max = Math.max(max, parse(Files.readString(size).trim()));
            }
        } catch (IOException | NumberFormatException e) {
            return FALLBACK_BYTES;
        }
        return max > 0 ? max : FALLBACK_BYTES;
    }

    /** {@code 32768K}, {@code 2M}, {@code 512}: sysfs's cache sizes. */
    static long parse(String s) {
        if (s.isEmpty()) return 0;
        char unit = Character.toUpperCase(s.charAt(s.length() - 1));
        long scale = switch (unit) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1;
        };
        String digits = scale == 1 ? s : s.substring(0, s.length() - 1);
        return Long.parseLong(digits) * scale;
    }
}
