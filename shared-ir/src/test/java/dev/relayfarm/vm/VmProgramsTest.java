package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.text.RelayParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole programs (closures, recursion, ADTs, {@code match}) compiled for the VM with real C kernels and run,
 * checked against the reference interpreter on the same inputs; a static model checked against the graph executor.
 */
class VmProgramsTest {
    @TempDir
    static Path tmp;

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    static IRModule example(String file) throws Exception {
        return RelayParser.parseModule(Files.readString(Path.of("..", "examples", file)), file);
    }

    static IRModule text(String source) {
        return RelayParser.parseModule("#[version = \"0.0.5\"]\n" + source, "test");
    }

    static VmProgram compile(IRModule m) {
        return VmCompiler.compile(m, CompileOptions.host(3));
    }

    static VirtualMachine load(IRModule m) {
        return compile(m).load(CCompiler.host().orElseThrow());
    }

    static NDArray random(int seed, int... shape) {
        Random r = new Random(seed);
        NDArray a = NDArray.zeros(DType.FLOAT32, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, r.nextGaussian());
        return a;
    }

    /** Runs @main on the VM and in the interpreter and compares; returns the VM's result. */
    static VmObject sameAsInterpreter(IRModule m, VirtualMachine vm, NDArray... args) {
        VmObject got = vm.runMain(args);
        Value want = Interpreter.runMain(m, args);
        VmValues.assertSame(want, got);
        return got;
    }

    static long count(Executable exe, Predicate<Instruction> kind) {
        return exe.functions().stream().flatMap(f -> f.code().stream()).filter(kind).count();
    }

    static double scalar(VmObject v) {
        return ((VmObject.Tensor) v).toNDArray().getDouble(0);
    }

    @Test
    void factorialRecursesThroughKernelsAndIf() throws Exception {
        IRModule m = example("factorial.relay");
        VmProgram p = compile(m);
        // the recursive local function is lifted to a global and called directly; its arithmetic and comparison are kernels
        assertTrue(count(p.executable(), i -> i instanceof Instruction.Invoke) >= 2, p.executable().toString());
        assertTrue(count(p.executable(), i -> i instanceof Instruction.If) >= 1);
        assertTrue(p.executable().kernels().size() >= 2, p.executable().kernels().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            for (int n : new int[] {0, 1, 5, 12}) sameAsInterpreter(m, vm, NDArray.scalar(n));
            assertEquals(479001600, scalar(vm.runMain(NDArray.scalar(12))));
        }
    }

    @Test
    void runsThatRepeatAndRunsThatDifferEachGetTheirOwnResult() throws Exception {
        // a run repeated is replayed from a memory plan (RunMemory); a deeper or shallower recursion leaves the plan midway,
        // and a plan is made again once a run repeats: every run must still compute its own factorial
        IRModule m = example("factorial.relay");
        try (VirtualMachine vm = load(m)) {
            for (int n : new int[] {5, 5, 5, 5, 8, 3, 3, 3, 7, 7, 7, 2, 7, 12, 7}) {
                long want = 1;
                for (int i = 2; i <= n; i++) want *= i;
                assertEquals(want, (long) scalar(vm.runMain(NDArray.scalar(n))), "factorial of " + n);
            }
        }
    }

    @Test
    void adtListWithPolymorphicMapAndFold() throws Exception {
        IRModule m = example("adt_list.relay");
        VmProgram p = compile(m);
        assertTrue(count(p.executable(), i -> i instanceof Instruction.GetTag) >= 2, "match compiles to tag tests");
        assertTrue(count(p.executable(), i -> i instanceof Instruction.InvokeClosure) >= 2, "@map and @foldl call their function argument");
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            VmObject got = sameAsInterpreter(m, vm);
            assertEquals(12.0, scalar(got), 1e-6);
        }
    }

    @Test
    void closuresCaptureComposeAndEscape() throws Exception {
        IRModule m = example("closures.relay");
        VmProgram p = compile(m);
        assertTrue(count(p.executable(), i -> i instanceof Instruction.AllocClosure ac && !ac.captured().isEmpty()) >= 2, "closures capture values");
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            VmObject got = sameAsInterpreter(m, vm, NDArray.scalar(2f), NDArray.scalar(5f));
            // h(b) = b*a + 3 = 13; k(x) = h(x + b) = (x + 5)*2 + 3, twice from 2: k(2) = 17, k(17) = 47; add3(1) = 4
            VmObject.Adt t = (VmObject.Adt) got;
            assertEquals(List.of(13.0, 47.0, 4.0), t.fields().stream().map(VmProgramsTest::scalar).toList());
            sameAsInterpreter(m, vm, NDArray.scalar(-1.5f), NDArray.scalar(0.25f));
        }
    }

    @Test
    void treeLstmOverAnAdtTreeMatchesTheInterpreter() throws Exception {
        IRModule m = example("tree_lstm.relay");
        try (VirtualMachine vm = load(m)) {
            for (int depth = 0; depth <= 5; depth++) {
                VmObject got = sameAsInterpreter(m, vm, NDArray.scalar(depth), random(depth, 1, 4), random(depth + 10, 16, 8));
                assertArrayEquals(new int[] {1, 4}, ((VmObject.Tensor) got).shape());
            }
        }
    }

    static final String OPTION = """
            type Option[A] {
              Some(A),
              None,
            }
            """;

    @Test
    void matchOnATupleScrutineeWithNestedConstructorAndWildcardPatterns() {
        IRModule m = text(OPTION + """
                def @pick(%a: Option[float32], %b: Option[float32]) -> float32 {
                  match (%a, %b) {
                    (Some(%x), Some(%y)) => %x + %y,
                    (Some(%x), _) => %x,
                    (None, Some(%y)) => %y * 10f,
                    _ => 100f,
                  }
                }
                def @main(%u: float32, %v: float32) -> (float32, float32, float32, float32) {
                  (@pick(Some(%u), Some(%v)), @pick(Some(%u), None), @pick(None, Some(%v)), @pick(None, None))
                }
                """);
        try (VirtualMachine vm = load(m)) {
            VmObject.Adt got = (VmObject.Adt) sameAsInterpreter(m, vm, NDArray.scalar(1.5f), NDArray.scalar(2f));
            assertEquals(List.of(3.5, 1.5, 20.0, 100.0), got.fields().stream().map(VmProgramsTest::scalar).toList());
        }
    }

    @Test
    void nestedConstructorPatternsAndConstructorsAsValues() {
        IRModule m = text("""
                type List[A] {
                  Cons(A, List[A]),
                  Nil,
                }
                def @first_two(%xs: List[float32]) -> float32 {
                  match (%xs) {
                    Cons(%x, Cons(%y, _)) => %x + %y,
                    Cons(%x, Nil) => %x,
                    Nil => 0f,
                  }
                }
                def @apply(%f: fn (float32, List[float32]) -> List[float32], %h: float32, %t: List[float32]) -> List[float32] {
                  %f(%h, %t)
                }
                def @main(%a: float32) -> (float32, float32, float32, List[float32]) {
                  let %l = @apply(Cons, %a, Cons(2f, Nil));
                  (@first_two(%l), @first_two(Cons(%a, Nil)), @first_two(Nil), %l)
                }
                """);
        try (VirtualMachine vm = load(m)) {
            VmObject.Adt got = (VmObject.Adt) sameAsInterpreter(m, vm, NDArray.scalar(4f));
            assertEquals(List.of(6.0, 4.0, 0.0), got.fields().subList(0, 3).stream().map(VmProgramsTest::scalar).toList());
        }
    }

    @Test
    void aMatchNoClauseCoversStopsWithAnError() {
        IRModule m = text(OPTION + """
                def @get(%o: Option[float32]) -> float32 {
                  match? (%o) {
                    Some(_) => 1f,
                  }
                }
                def @main(%u: float32) -> float32 { @get(None) }
                """);
        try (VirtualMachine vm = load(m)) {
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.scalar(1f)));
            // the optimizer may inline @get into @main; the source position of the match survives
            assertTrue(e.getMessage().contains("no clause of the match") && e.getMessage().contains("test:7:3"), e.getMessage());
        }
    }

    @Test
    void factorialOfTenThousandRunsWithoutJavaStackOverflow() throws Exception {
        IRModule m = example("factorial.relay");
        try (VirtualMachine vm = load(m)) {
            // int32 wraps: 10,000! has far more than 32 factors of two, so the product is 0 (as in the interpreter)
            VmObject got = sameAsInterpreter(m, vm, NDArray.scalar(10_000));
            assertEquals(0, scalar(got));
        }
    }

    static final String LISTS = """
            type List[A] {
              Cons(A, List[A]),
              Nil,
            }
            def @build(%n: int64, %acc: List[int64]) -> List[int64] {
              if (%n == 0i64) { %acc } else { @build(%n - 1i64, Cons(%n, %acc)) }
            }
            def @sum(%xs: List[int64]) -> int64 {
              match (%xs) {
                Cons(%h, %t) => %h + @sum(%t),
                Nil => 0i64,
              }
            }
            """;

    @Test
    void aListOfAHundredThousandElementsIsBuiltSummedAndReturned() {
        IRModule m = text(LISTS + "def @main(%n: int64) -> (int64, List[int64]) { let %l = @build(%n, Nil); (@sum(%l), %l) }\n");
        try (VirtualMachine vm = load(m)) {
            sameAsInterpreter(m, vm, NDArray.scalar(2_000L));
            // 100,000: @build and @sum each recurse 100,000 VM frames deep (neither the VM nor the result's copy to the
            // heap recurses in Java); the interpreter is not asked, it needs minutes and gigabytes this deep
            VmObject.Adt got = (VmObject.Adt) vm.runMain(NDArray.scalar(100_000L));
            assertEquals(5_000_050_000L, ((VmObject.Tensor) got.fields().getFirst()).toNDArray().getLong(0));
            VmObject list = got.fields().get(1);
            for (long expected = 1; expected <= 100_000; expected++) {
                VmObject.Adt cons = (VmObject.Adt) list;
                assertEquals(0, cons.tag(), "element " + expected + " is a Cons");
                assertEquals(expected, ((VmObject.Tensor) cons.fields().get(0)).toNDArray().getLong(0));
                list = cons.fields().get(1);
            }
            assertEquals(1, ((VmObject.Adt) list).tag(), "the list ends with Nil");
        }
    }

    @Test
    void theFrameBudgetStopsRunawayRecursionWithAnErrorNamingTheFunction() {
        IRModule m = text(LISTS + "def @main(%n: int64) -> int64 { @sum(@build(%n, Nil)) }\n");
        VmProgram p = compile(m);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxFrames(1_000))) {
            // 900 elements: @sum recurses 900 frames deep, inside the budget of 1,000 (@build's calls are tail calls)
            assertEquals(405_450L, ((VmObject.Tensor) vm.runMain(NDArray.scalar(900L))).toNDArray().getLong(0));
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.scalar(5_000L)));
            assertTrue(e.getMessage().contains("stack of 1000 frames is full calling sum"), e.getMessage());
        }
    }

    @Test
    void tailCallsRunInConstantStack() {
        IRModule m = text("""
                def @loop(%i: int64, %acc: int64) -> int64 {
                  if (%i == 0i64) { %acc } else { @loop(%i - 1i64, %acc + %i) }
                }
                def @main(%n: int64) -> int64 {
                  let %step = fn (%k: int64, %f: fn (int64, int64) -> int64) -> int64 { %f(%k, 0i64) };
                  %step(%n, @loop)
                }
                """);
        VmProgram p = compile(m);
        // @loop's recursive call is followed directly by the Ret of its result: a tail call
        VmFunction loop = p.executable().functions().get(p.executable().functionIndex("loop").orElseThrow());
        List<Instruction> code = loop.code();
        assertTrue(java.util.stream.IntStream.range(0, code.size() - 1)
                .anyMatch(i -> code.get(i) instanceof Instruction.Invoke inv && code.get(i + 1) instanceof Instruction.Ret ret && ret.result() == inv.dst()), code.toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxFrames(10))) {
            // 200,000 iterations under a budget of 10 frames
            assertEquals(20_000_100_000L, ((VmObject.Tensor) vm.runMain(NDArray.scalar(200_000L))).toNDArray().getLong(0));
        }
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxRunBytes(1 << 20))) {
            // the scalars each iteration passes on to the next are kept until the run ends, and the budget says so
            VmException e = assertThrows(VmException.class, () -> vm.runMain(NDArray.scalar(200_000L)));
            assertTrue(e.getMessage().contains("more than 1048576 bytes of tensor memory") && e.getMessage().contains("VmOptions.maxRunBytes"), e.getMessage());
            // the next run starts from empty memory again
            assertEquals(500_500L, ((VmObject.Tensor) vm.runMain(NDArray.scalar(1_000L))).toNDArray().getLong(0));
        }
        try (VirtualMachine vm = load(m)) {
            sameAsInterpreter(m, vm, NDArray.scalar(1_000L));
        }
    }

    @Test
    void aLongLetChainCompilesAndRunsWithoutDeepJavaRecursion() {
        // every let ends a fusion group, so each add is a kernel call (all of them one shared kernel)
        StringBuilder sb = new StringBuilder("def @main(%x: int64) -> int64 {\n");
        String prev = "%x";
        for (int i = 0; i < 20_000; i++) {
            sb.append("  let %v").append(i).append(" = add(").append(prev).append(", 1i64);\n");
            prev = "%v" + i;
        }
        IRModule m = text(sb.append("  ").append(prev).append("\n}\n").toString());
        VmProgram p = compile(m);
        assertEquals(1, p.executable().kernels().size(), p.executable().kernels().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            assertEquals(20_005L, ((VmObject.Tensor) vm.runMain(NDArray.scalar(5L))).toNDArray().getLong(0));
        }
    }

    @Test
    void kernelResultsAreReusedAfterTheirLastRead() throws Exception {
        // 40 softmaxes over 64 KiB each: 2.5 MiB without reuse, two blocks with it
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(64, 256), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < 40; i++) {
            sb.append("  %").append(i).append(" = nn.softmax(").append(prev).append(");\n");
            prev = "%" + i;
        }
        IRModule m = text(sb.append("  exp(").append(prev).append(")\n}\n").toString());
        VmProgram p = compile(m);
        assertTrue(count(p.executable(), i -> i instanceof Instruction.KillRegister) >= 39, p.executable().functions().toString());
        NDArray x = random(9, 64, 256);
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxRunBytes(4 * 64 * 1024))) {
            sameAsInterpreter(m, vm, x);
            sameAsInterpreter(m, vm, random(10, 64, 256));
        }
    }

    @Test
    void aKilledBlockIsReusedByASmallerResult() throws Exception {
        // every result 4 KiB smaller than the last (softmax, then a slice of 4 rows fewer): exact-size reuse would find no
        // block of the right size and take about 0.8 MiB; best fit (FreeBlocks) runs in two blocks beside the 64 KiB input
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(64, 256), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < 8; i++) {
            sb.append("  %a").append(i).append(" = nn.softmax(").append(prev).append(");\n");
            sb.append("  %b").append(i).append(" = strided_slice(%a").append(i).append(", begin=[0, 0], end=[").append(60 - 4 * i).append(", 256]);\n");
            prev = "%b" + i;
        }
        IRModule m = text(sb.append("  exp(").append(prev).append(")\n}\n").toString());
        try (VirtualMachine vm = compile(m).load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxRunBytes(4 * 64 * 1024))) {
            // from the third run on, from a plan of the second's memory: other data each time, so a stale block would show
            for (int seed = 11; seed < 15; seed++) sameAsInterpreter(m, vm, random(seed, 64, 256));
        }
    }

    @Test
    void aResultReadOnlyThroughAReshapeIsStillReused() throws Exception {
        // softmax, then a reshape (a view of the same bytes, ReshapeTensor; the last fuses into exp), ten times: the softmax results die at their
        // views' last reads (StorageKills follows the view), so 64 KiB blocks are reused instead of ten being kept
        StringBuilder sb = new StringBuilder("def @main(%x: Tensor[(64, 256), float32]) {\n");
        String prev = "%x";
        for (int i = 0; i < 10; i++) {
            sb.append("  %s").append(i).append(" = nn.softmax(").append(prev).append(");\n");
            sb.append("  %r").append(i).append(" = reshape(%s").append(i).append(", newshape=").append(i % 2 == 0 ? "[256, 64]" : "[64, 256]").append(");\n");
            prev = "%r" + i;
        }
        IRModule m = text(sb.append("  exp(").append(prev).append(")\n}\n").toString());
        VmProgram p = compile(m);
        assertTrue(count(p.executable(), i -> i instanceof Instruction.ReshapeTensor) >= 9, p.executable().functions().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow(), VmOptions.DEFAULT.withMaxRunBytes(4 * 64 * 1024))) {
            sameAsInterpreter(m, vm, random(13, 64, 256));
            sameAsInterpreter(m, vm, random(14, 64, 256));
        }
    }

    @Test
    void aReshapedResultThatEscapesKeepsItsBlock() {
        // %1 views %0's bytes and is returned: were %0 killed after %2 reads the view, %3 (same size) would take its
        // block and overwrite what %1 shows
        IRModule m = text("""
                def @main(%x: Tensor[(64, 256), float32]) {
                  %0 = nn.softmax(%x);
                  %1 = reshape(%0, newshape=[256, 64]);
                  %2 = nn.softmax(%1);
                  %3 = nn.softmax(%2);
                  %4 = nn.softmax(%3);
                  (%1, %4)
                }
                """);
        try (VirtualMachine vm = load(m)) {
            sameAsInterpreter(m, vm, random(15, 64, 256));
        }
    }

    @Test
    void aStaticModelGivesTheGraphExecutorsOutput() throws Exception {
        IRModule m = example("mlp.relay");
        NDArray x = random(1, 1, 784), w1 = random(2, 128, 784), b1 = random(3, 128), w2 = random(4, 10, 128), b2 = random(5, 10);
        List<NDArray> inputs = List.of(x, w1, b1, w2, b2);
        Path dir = tmp.resolve("mlp");
        ArtifactCompiler.compile(OptPipeline.optimize(m, 3), CompileOptions.host(3), dir);
        NDArray want;
        try (CompiledModel graph = CompiledModel.load(dir)) {
            want = graph.run(inputs).getFirst();
        }
        try (VirtualMachine vm = load(m)) {
            NDArray got = ((VmObject.Tensor) vm.run("main", inputs)).toNDArray();
            assertArrayEquals(want.shape(), got.shape());
            for (int i = 0; i < want.elementCount(); i++) assertEquals(want.getDouble(i), got.getDouble(i), 1e-6, "element " + i);
            sameAsInterpreter(m, vm, x, w1, b1, w2, b2);
        }
    }

    @Test
    void referencesAreReadAndWrittenThroughEveryAlias() throws Exception {
        // the interpreter's reference program: a counter bumped twice through ref_write
        IRModule counter = RelayParser.parseModule(Files.readString(Path.of("src/test/resources/relay/refs.relay")), "refs.relay");
        VmProgram p = compile(counter);
        assertTrue(count(p.executable(), i -> i instanceof Instruction.StoreRef) == 2, p.executable().toString());
        try (VirtualMachine vm = p.load(CCompiler.host().orElseThrow())) {
            assertEquals(2, scalar(sameAsInterpreter(counter, vm)));
        }
        // a reference passed to a recursive global, written there n times through kernels, read back by @main; the
        // tensor it held first is a kernel result that escapes into the reference, so its block must stay unkilled
        IRModule loop = text("""
                def @loop(%r: ref(Tensor[(4), float32]), %n: int32) -> () {
                  if (equal(%n, 0)) { () } else {
                    let %u = ref_write(%r, add(multiply(ref_read(%r), 2f), 1f));
                    @loop(%r, subtract(%n, 1))
                  }
                }
                def @main(%x: Tensor[(4), float32], %n: int32) -> (Tensor[(4), float32], Tensor[(4), float32]) {
                  let %first = exp(%x);
                  let %r = ref(%first);
                  let %alias = %r;
                  let %u = @loop(%alias, %n);
                  (ref_read(%r), %first)
                }
                """);
        try (VirtualMachine vm = load(loop)) {
            for (int n : new int[] {0, 3, 10, 3}) {
                VmObject.Adt got = (VmObject.Adt) sameAsInterpreter(loop, vm, random(n, 4), NDArray.scalar(n));
                NDArray first = ((VmObject.Tensor) got.fields().get(1)).toNDArray(), last = ((VmObject.Tensor) got.fields().get(0)).toNDArray();
                double want = first.getDouble(2);
                for (int i = 0; i < n; i++) want = want * 2 + 1;
                assertEquals(want, last.getDouble(2), 1e-4 * Math.abs(want), "after " + n + " writes");
            }
        }
    }

    @Test
    void aReturnedReferenceKeepsItsValueAndItsAliases() {
        // two fields of the result are one reference: the copy to the heap keeps them one
        IRModule m = text("""
                def @main(%x: Tensor[(3), float32]) -> (ref(Tensor[(3), float32]), ref(Tensor[(3), float32])) {
                  let %r = ref(%x);
                  let %u = ref_write(%r, negative(%x));
                  (%r, %r)
                }
                """);
        try (VirtualMachine vm = load(m)) {
            VmObject.Adt got = (VmObject.Adt) vm.runMain(NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {1, -2, 3}));
            assertTrue(got.fields().get(0) == got.fields().get(1), "one reference, not two copies");
            VmObject.Ref r = (VmObject.Ref) got.fields().get(0);
            assertEquals(2.0, ((VmObject.Tensor) r.value()).toNDArray().getDouble(1));
        }
    }

    @Test
    void aFunctionNestedInAPolymorphicGlobalRuns() {
        IRModule m = text("""
                def @twice[A](%f: fn (A) -> A, %x: A) -> A { let %g = fn (%y: A) -> A { %f(%f(%y)) }; %g(%x) }
                def @main(%x: float32) -> float32 { @twice(fn (%z: float32) -> float32 { add(%z, 1f) }, %x) }
                """);
        try (VirtualMachine vm = load(m)) {
            assertEquals(4.5, scalar(sameAsInterpreter(m, vm, NDArray.scalar(2.5f))));
        }
    }
}
