package dev.relayfarm.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Device}: the fingerprint from /proc/cpuinfo and a class that separates what changes kernel timings. */
class DeviceTest {
    private static final String X86 = """
            processor\t: 0
            vendor_id\t: AuthenticAMD
            model name\t: AMD EPYC 9654 96-Core Processor
            flags\t\t: fpu vme sse sse2 ssse3 fma sse4_1 sse4_2 popcnt avx f16c hypervisor bmi1 avx2 avx512f avx512bw
            bugs\t\t: sysret_ss_attrs spectre_v1

            processor\t: 1
            model name\t: AMD EPYC 9654 96-Core Processor
            flags\t\t: fpu vme sse sse2 ssse3 fma sse4_1 sse4_2 popcnt avx f16c hypervisor bmi1 avx2 avx512f avx512bw
            """;
    private static final String ARM = """
            processor\t: 0
            BogoMIPS\t: 50.00
            Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp
            CPU implementer\t: 0x41
            CPU part\t: 0xd0c
            """;

    @Test
    void x86FingerprintKeepsOnlyIsaFlags() {
        Device d = Device.fromCpuinfo(X86, "x86_64", 4);
        assertEquals("AMD EPYC 9654 96-Core Processor", d.model());
        assertEquals(List.of("avx", "avx2", "avx512bw", "avx512f", "bmi1", "f16c", "fma", "popcnt", "sse", "sse2", "sse4_1", "sse4_2", "ssse3"), d.isa());
        assertTrue(d.deviceClass().matches("cpu-x86_64-avx512-4c-[0-9a-f]{8}"), d.deviceClass());
        // stable: the same text gives the same class, and flags that are not ISA (a new kernel's bug list, hypervisor) do not count
        assertEquals(d.deviceClass(), Device.fromCpuinfo(X86.replace("hypervisor ", ""), "x86_64", 4).deviceClass());
    }

    @Test
    void modelIsaAndCoresEachChangeTheClass() {
        String base = Device.fromCpuinfo(X86, "x86_64", 4).deviceClass();
        assertNotEquals(base, Device.fromCpuinfo(X86, "x86_64", 8).deviceClass());
        assertNotEquals(base, Device.fromCpuinfo(X86.replace("EPYC 9654", "EPYC 9754"), "x86_64", 4).deviceClass());
        String noBw = Device.fromCpuinfo(X86.replace(" avx512bw", ""), "x86_64", 4).deviceClass();
        assertNotEquals(base, noBw);
        assertTrue(noBw.startsWith("cpu-x86_64-avx512-4c-"), "same widest extension, another hash: " + noBw);
        assertTrue(Device.fromCpuinfo(X86.replace(" avx512f avx512bw", ""), "x86_64", 4).deviceClass().startsWith("cpu-x86_64-avx2-4c-"));
    }

    @Test
    void aarch64HasNoModelNameButImplementerAndPart() {
        Device d = Device.fromCpuinfo(ARM, "aarch64", 2);
        assertEquals("implementer 0x41 part 0xd0c", d.model());
        assertTrue(d.isa().contains("asimd"));
        assertTrue(d.deviceClass().startsWith("cpu-aarch64-asimd-2c-"), d.deviceClass());
    }

    @Test
    void thisMachineHasAClass() {
        Device here = Device.local();
        assertTrue(here.deviceClass().startsWith("cpu-" + Device.arch(System.getProperty("os.arch")) + "-"), here.deviceClass());
        assertEquals(Runtime.getRuntime().availableProcessors(), here.cores());
        assertEquals(here, Device.local());
    }
}
