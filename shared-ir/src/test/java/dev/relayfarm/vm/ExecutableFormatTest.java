package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.KernelLibrary;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The executable's binary form: a lossless, deterministic round trip, and clear errors for a wrong magic, version, truncation or bytecode. */
class ExecutableFormatTest {
    @TempDir
    Path tmp;

    static Executable treeLstm() throws Exception {
        return VmProgramsTest.compile(VmProgramsTest.example("tree_lstm.relay")).executable();
    }

    static void assertSameExecutable(Executable want, Executable got) {
        assertEquals(want.functions(), got.functions());
        assertEquals(want.kernels(), got.kernels());
        assertEquals(want.constructors(), got.constructors());
        assertEquals(want.constants().size(), got.constants().size());
        for (int i = 0; i < want.constants().size(); i++) assertTrue(want.constants().get(i).contentEquals(got.constants().get(i)), "constant " + i);
    }

    @Test
    void roundTripIsLosslessAndDeterministic() throws Exception {
        Executable exe = treeLstm();
        byte[] bytes = ExecutableFormat.toBytes(exe);
        Executable back = ExecutableFormat.fromBytes(bytes);
        assertSameExecutable(exe, back);
        assertArrayEquals(bytes, ExecutableFormat.toBytes(back));
        assertArrayEquals(new byte[] {'R', 'F', 'V', 'M', 0, 0, 0, 1}, Arrays.copyOf(bytes, 8)); // needs nothing of version 2
        Path file = tmp.resolve(ExecutableFormat.FILE);
        ExecutableFormat.write(file, exe);
        assertSameExecutable(exe, ExecutableFormat.read(file));
    }

    @Test
    void aReadBackExecutableRunsLikeTheCompiledOne() throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule m = VmProgramsTest.example("tree_lstm.relay");
        VmProgram p = VmProgramsTest.compile(m);
        Executable back = ExecutableFormat.fromBytes(ExecutableFormat.toBytes(p.executable()));
        NDArray d = NDArray.scalar(4), x = VmProgramsTest.random(1, 1, 4), w = VmProgramsTest.random(4, 16, 8);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow());
             VirtualMachine loaded = new VirtualMachine(back, Optional.of(KernelLibrary.build(p.kernelModule(), CCompiler.host().orElseThrow())))) {
            NDArray want = ((VmObject.Tensor) vm.runMain(d, x, w)).toNDArray();
            NDArray got = ((VmObject.Tensor) loaded.runMain(d, x, w)).toNDArray();
            assertTrue(want.contentEquals(got), "the same bytecode and kernels give the same bits");
        }
    }

    @Test
    void aWrongMagicIsNamed() throws Exception {
        byte[] bytes = ExecutableFormat.toBytes(treeLstm());
        bytes[0] = 'P';
        bytes[1] = 'K';
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(bytes));
        assertTrue(e.getMessage().contains("not a RelayFarm VM executable") && e.getMessage().contains("\"PKVM\""), e.getMessage());
    }

    @Test
    void anUnknownVersionIsNamed() throws Exception {
        byte[] bytes = ExecutableFormat.toBytes(treeLstm());
        bytes[7] = 99;
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(bytes));
        assertTrue(e.getMessage().contains("version 99") && e.getMessage().contains("reads versions 1 to " + ExecutableFormat.VERSION), e.getMessage());
    }

    @Test
    void everyTruncationIsReportedAsTruncated() throws Exception {
        byte[] bytes = ExecutableFormat.toBytes(treeLstm());
        for (int n = 0; n < bytes.length; n++) {
            byte[] cut = Arrays.copyOf(bytes, n);
            var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(cut), "prefix of " + n + " bytes");
            assertTrue(e.getMessage().startsWith("truncated executable: the file ends at byte " + n), n + ": " + e.getMessage());
        }
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 3);
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(longer));
        assertTrue(e.getMessage().contains("3 bytes left over"), e.getMessage());
    }

    @Test
    void theVerifierRejectsBytecodeThatWouldFailMidRun() {
        Executable badRegister = new Executable(List.of(new VmFunction("main", 1, 2, List.of(new Instruction.Move(0, 5), new Instruction.Ret(1)))),
                List.of(), List.of(), List.of());
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(ExecutableFormat.toBytes(badRegister)));
        assertTrue(e.getMessage().contains("function main, instruction 0") && e.getMessage().contains("register 5"), e.getMessage());

        Executable fallsOff = new Executable(List.of(new VmFunction("main", 1, 1, List.of(new Instruction.KillRegister(0)))), List.of(), List.of(), List.of());
        e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> new VirtualMachine(fallsOff, Optional.empty()));
        assertTrue(e.getMessage().contains("run off its end"), e.getMessage());

        Executable badJump = new Executable(List.of(new VmFunction("main", 1, 1, List.of(new Instruction.Goto(7), new Instruction.Ret(0)))), List.of(), List.of(), List.of());
        e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> BytecodeVerifier.verify(badJump));
        assertTrue(e.getMessage().contains("jump by 7"), e.getMessage());

        Executable badConstant = new Executable(List.of(new VmFunction("main", 0, 1, List.of(new Instruction.LoadConst(0, 0), new Instruction.Ret(0)))),
                List.of(), List.of(), List.of());
        e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> BytecodeVerifier.verify(badConstant));
        assertTrue(e.getMessage().contains("constant 0 does not exist"), e.getMessage());
    }

    @Test
    void anUnknownOpcodeIsNamedWithItsOffset() {
        Executable exe = new Executable(List.of(new VmFunction("main", 1, 1, List.of(new Instruction.Ret(0)))),
                List.of(NDArray.scalar(1f)), List.of(), List.of());
        byte[] bytes = ExecutableFormat.toBytes(exe);
        // the Ret's opcode is the fifth byte from the end (opcode, then its register as an int)
        bytes[bytes.length - 5] = 77;
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(bytes));
        assertTrue(e.getMessage().contains("unknown opcode 77 at byte " + (bytes.length - 5)), e.getMessage());
        assertEquals(DType.FLOAT32, ExecutableFormat.fromBytes(ExecutableFormat.toBytes(exe)).constants().getFirst().dtype());
    }

    @Test
    void theVersionWrittenIsTheOldestThatHoldsTheExecutable() throws Exception {
        // nothing new: version 1, which a VM of the previous format reads
        byte[] plain = ExecutableFormat.toBytes(treeLstm());
        assertEquals(1, java.nio.ByteBuffer.wrap(plain, 4, 4).getInt());
        // references: version 2, and the same bytes back
        Executable refs = VmProgramsTest.compile(VmProgramsTest.text("def @main(%x: float32) -> float32 { let %r = ref(%x); let %u = ref_write(%r, %x); ref_read(%r) }\n"))
                .executable();
        byte[] two = ExecutableFormat.toBytes(refs);
        assertEquals(2, java.nio.ByteBuffer.wrap(two, 4, 4).getInt());
        assertArrayEquals(two, ExecutableFormat.toBytes(ExecutableFormat.fromBytes(two)));
        // the same file claiming version 1 holds opcodes version 1 did not have
        byte[] downgraded = two.clone();
        downgraded[7] = 1;
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(downgraded));
        assertTrue(e.getMessage().contains("needs format version 2"), e.getMessage());
    }

    @Test
    void aDynamicBatchRoundTripsAndADynamicInnerDimensionIsRefused() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Executable dyn = VmProgramsTest.compile(VmProgramsTest.text("def @main(%x: Tensor[(?, 4), float32]) { exp(%x) }\n")).executable();
        byte[] bytes = ExecutableFormat.toBytes(dyn);
        assertEquals(2, java.nio.ByteBuffer.wrap(bytes, 4, 4).getInt());
        Executable back = ExecutableFormat.fromBytes(bytes);
        assertEquals(dyn.kernels(), back.kernels());
        // move the -1 of p0's leading dimension to its second: find the dims [-1, 4] of the row kernel's first parameter
        byte[] bad = bytes.clone();
        int at = -1;
        for (int i = 0; i + 8 <= bad.length && at < 0; i++) {
            if (java.nio.ByteBuffer.wrap(bad, i, 8).getLong() == ((long) -1 << 32 | 4)) at = i;
        }
        assertTrue(at >= 0, "the dims [-1, 4] are in the file");
        java.nio.ByteBuffer.wrap(bad, at, 8).putLong(4L << 32 | 0xffffffffL);
        var e = assertThrows(ExecutableFormat.ExecutableFormatException.class, () -> ExecutableFormat.fromBytes(bad));
        assertTrue(e.getMessage().contains("dynamic dimension at position 1"), e.getMessage());
    }
}
