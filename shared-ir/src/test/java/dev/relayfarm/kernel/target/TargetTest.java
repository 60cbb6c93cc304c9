package dev.relayfarm.kernel.target;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TargetTest {
    private static boolean hostIsX86() {
        return Target.hostTriple().startsWith("x86_64");
    }

    @Test
    void namedX86LevelHasItsFeaturesAndMarch() {
        assumeTrue(hostIsX86());
        Target t = Target.parse("c -mcpu=x86-64-v3");
        assertEquals(Target.Arch.X86_64, t.arch());
        assertTrue(t.features().containsAll(Set.of("avx", "avx2", "fma", "sse4_2")), t.features().toString());
        assertFalse(t.hasFeature("avx512f"));
        assertEquals(256, t.vectorBits());
        assertEquals(List.of("-march=x86-64-v3"), t.compilerFlags());
        assertFalse(t.isCross());
        assertEquals("c -mcpu=x86-64-v3", t.toString());
        assertEquals(512, Target.parse("c -mcpu=x86-64-v4").vectorBits());
        assertEquals(128, Target.parse("c -mcpu=x86-64").vectorBits());
        // layout blocks: two vectors of float32, then one
        assertEquals(List.of(16, 8), t.channelBlocks());
        assertEquals(List.of(16, 8), Target.parse("c -mcpu=x86-64-v4").channelBlocks(), "the templates' register budget is AVX2's");
        assertEquals(List.of(8, 4), Target.parse("c -mcpu=x86-64").channelBlocks());
        assertEquals(List.of(8, 4), Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72").channelBlocks());
    }

    @Test
    void nativeTakesTheHostFeatures() {
        Target t = Target.parse("c -mcpu=native");
        assertEquals(Target.hostFeatures(), t.features());
        assertTrue(t.isHost());
        assertEquals(t, Target.host());
        assertEquals(t, Target.parse("c"), "no -mcpu on the host means native");
        assertEquals(t, Target.parse("  c   -mcpu=native  "));
        if (hostIsX86()) assertEquals(List.of("-march=native"), t.compilerFlags());
    }

    @Test
    void crossTripleUsesMcpuAndNeon() {
        Target t = Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
        assertEquals(Target.Arch.AARCH64, t.arch());
        assertEquals(Set.of("neon"), t.features());
        assertEquals(List.of("-mcpu=cortex-a72"), t.compilerFlags());
        assertEquals(128, t.vectorBits());
        if (hostIsX86()) {
            assertTrue(t.isCross());
            assertFalse(t.isHost());
            assertEquals(List.of("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-cc"), t.crossCompilerCandidates());
            assertEquals("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", t.toString());
        }
        // Option order does not matter: equal values, one canonical string.
        assertEquals(t, Target.parse("c -mcpu=cortex-a72 -mtriple=aarch64-linux-gnu"));
        assertEquals(t.toString(), Target.parse(t.toString()).toString());
    }

    @Test
    void mattrAddsAndRemovesFeatures() {
        assumeTrue(hostIsX86());
        Target t = Target.parse("c -mcpu=x86-64-v3 -mattr=+avx512f,-fma");
        assertTrue(t.hasFeature("avx512f"));
        assertFalse(t.hasFeature("fma"));
        assertEquals(List.of("-march=x86-64-v3", "-mavx512f", "-mno-fma"), t.compilerFlags());
        Target a = Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a53 -mattr=+dotprod");
        assertEquals(List.of("-mcpu=cortex-a53+dotprod"), a.compilerFlags());
    }

    @Test
    void hostNotHostWhenFeaturesAreMissing() {
        assumeTrue(hostIsX86());
        Target v4 = Target.parse("c -mcpu=x86-64-v4");
        assertEquals(Target.hostFeatures().contains("avx512f"), v4.isHost());
        assertTrue(Target.parse("c -mcpu=x86-64").isHost());
    }

    @Test
    void cpuinfoParsingOnBothArchitectures() {
        String x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse sse2 pni ssse3 fma sse4_1 sse4_2 avx avx2 bmi1\n"
                + "processor\t: 1\nflags\t\t: fpu\n";
        Set<String> f = Target.featuresFromCpuinfo(x86);
        assertTrue(f.containsAll(Set.of("sse3", "fma", "avx2", "sse4_2", "bmi1")), f.toString());
        assertFalse(f.contains("pni"));
        String arm = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm aes crc32 asimddp\n";
        assertEquals(Set.of("fp", "neon", "evtstrm", "aes", "crc32", "dotprod"), Target.featuresFromCpuinfo(arm));
        assertEquals(Set.of(), Target.featuresFromCpuinfo("garbage"));
    }

    @Test
    void compilerForTargetSwapsTheArchFlags() {
        assumeTrue(hostIsX86() && CCompiler.host().isPresent());
        List<String> flags = CCompiler.forTarget(Target.parse("c -mcpu=x86-64-v3")).orElseThrow().flags();
        assertTrue(flags.contains("-march=x86-64-v3") && !flags.contains("-march=native"), flags.toString());
        assertTrue(flags.contains("-fopenmp-simd") && flags.contains("-pthread"), flags.toString());
        Target arm = Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
        CCompiler.forTarget(arm).ifPresent(c -> assertTrue(c.command().startsWith("aarch64-linux-gnu-"), c.command()));
    }

    private static String error(String text) {
        return assertThrows(TargetException.class, () -> Target.parse(text)).getMessage();
    }

    @Test
    void badStringsNameTheBadToken() {
        assertTrue(error("llvm -mcpu=native").contains("unknown target kind 'llvm'"), error("llvm -mcpu=native"));
        assertTrue(error("c -mcpu=pentium9").contains("unknown CPU '-mcpu=pentium9'"), error("c -mcpu=pentium9"));
        assertTrue(error("c -mcpu=pentium9").contains("x86-64-v3") || !hostIsX86());
        assertTrue(error("c -mfoo=1").contains("unknown target option '-mfoo=1'"));
        assertTrue(error("c -mcpu").contains("'-mcpu' needs a value"));
        assertTrue(error("c -mcpu=x86-64 -mcpu=x86-64-v3").contains("-mcpu given twice ('-mcpu=x86-64-v3')"));
        assertTrue(error("c -mtriple=riscv64-linux-gnu").contains("unsupported architecture 'riscv64'"));
        assertTrue(error("c -mattr=avx2").contains("bad feature 'avx2'"));
        assertTrue(error("").contains("empty target string"));
        assertTrue(error("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a99").contains("unknown CPU '-mcpu=cortex-a99' for aarch64"));
        if (hostIsX86()) assertTrue(error("c -mtriple=aarch64-linux-gnu -mcpu=native").contains("'-mcpu=native' cannot be used with the cross triple"));
    }
}
