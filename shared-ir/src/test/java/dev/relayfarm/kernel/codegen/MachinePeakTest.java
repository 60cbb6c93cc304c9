package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class MachinePeakTest {
    @Test
    void measuresAPlausibleFmaThroughput() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: nothing to measure with");
        OptionalDouble one = MachinePeak.measure(1);
        // one core of anything this runs on: more than a scalar FMA per ns, less than 4 x 16-lane FMAs per cycle at 10 GHz
        assertTrue(one.isPresent() && one.getAsDouble() > 2 && one.getAsDouble() < 10_000, "measured " + one);
    }

    @Test
    void measuresAPlausibleMemoryBandwidth() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: nothing to measure with");
        OptionalDouble gbps = MachinePeak.bandwidth(1);
        // one thread streaming 192 MiB: more than a slow disk, less than any memory system of this decade
        assertTrue(gbps.isPresent() && gbps.getAsDouble() > 0.5 && gbps.getAsDouble() < 2_000, "measured " + gbps);
        assertThrows(IllegalArgumentException.class, () -> MachinePeak.bandwidth(0));
    }

    @Test
    void measuresAPlausibleReadBandwidth() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: nothing to measure with");
        OptionalDouble read = MachinePeak.readBandwidth(1);
        assertTrue(read.isPresent() && read.getAsDouble() > 0.5 && read.getAsDouble() < 2_000, "measured " + read);
        assertThrows(IllegalArgumentException.class, () -> MachinePeak.readBandwidth(0));
    }

    @Test
    void theLastLevelCacheIsReadFromLinux() {
        assumeTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/sys/devices/system/cpu/cpu0/cache/index0")), "no cache information in /sys");
        java.util.OptionalLong llc = MachinePeak.lastLevelCacheBytes();
        // any machine this runs on has a shared cache of a megabyte or more, and none of a gigabyte yet
        assertTrue(llc.isPresent() && llc.getAsLong() >= 1 << 20 && llc.getAsLong() < 1L << 30, "last-level cache " + llc);
    }

    @Test
    void theProgramRunsTwelveIndependentVectorChains() {
        String c = MachinePeak.source();
        assertEquals(MachinePeak.CHAINS, c.lines().filter(l -> l.matches("\\s*a\\d+ = a\\d+ \\* b \\+ c;")).count());
        assertTrue(c.contains("vector_size(32)"), "8 float32 lanes, the width the kernels are scheduled for");
        assertThrows(IllegalArgumentException.class, () -> MachinePeak.measure(0));
    }
}
