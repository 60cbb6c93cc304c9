package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.ir.Type;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The generator itself: deterministic, well-formed, and reaching every feature it promises. */
class GeneratorTest {
    static final int MODULES = Boolean.getBoolean("relayfarm.long") ? 10_000 : 1_000;

    @Test
    void sameSeedGivesTheSameModule() {
        for (long seed = 0; seed < 100; seed++) {
            IRModule a = RandomModules.module(seed);
            IRModule b = RandomModules.module(seed);
            assertTrue(StructuralEquality.diff(a, b).isEmpty(), () -> "seed " + StructuralEquality.diff(a, b));
            assertEquals(StructuralHash.hash(a), StructuralHash.hash(b));
        }
    }

    @Test
    void differentSeedsGiveDifferentModules() {
        Set<Integer> hashes = new HashSet<>();
        for (long seed = 0; seed < 200; seed++) hashes.add(StructuralHash.hash(RandomModules.module(seed)));
        // Tiny modules can coincide; almost all must differ.
        assertTrue(hashes.size() > 190, "only " + hashes.size() + " distinct modules in 200 seeds");
    }

    @Test
    void generatedModulesAreWellFormed() {
        for (long seed = 0; seed < MODULES; seed++) {
            List<String> problems = WellFormed.problems(RandomModules.module(seed));
            long s = seed;
            assertTrue(problems.isEmpty(), () -> "seed " + s + ":\n" + String.join("\n", problems));
        }
    }

    @Test
    void largeChainsAreWellFormedAndAsLargeAsPromised() {
        IRModule flow = RandomModules.dataflowChain(100_000);
        IRModule lets = RandomModules.letChain(100_000);
        assertEquals(List.of(), WellFormed.problems(flow));
        assertEquals(List.of(), WellFormed.problems(lets));
        // call + op + constant per level, plus %x and the function
        assertEquals(3 * 100_000 + 2, ExprTraversal.countNodes(flow));
        // let + call + op + constant + the previous variable per level, the last variable, the function
        assertEquals(5 * 100_000 + 1 + 1, ExprTraversal.countNodes(lets));
    }

    @Test
    void wellFormedCheckerCatchesScopeErrors() {
        // A variable used outside its let: let %a = 1f; %a  but the use sits in a second global.
        dev.relayfarm.ir.Var a = dev.relayfarm.ir.Var.fresh("a");
        dev.relayfarm.ir.Function main = new dev.relayfarm.ir.Function(List.of(),
                new dev.relayfarm.ir.Let(a, new dev.relayfarm.ir.Constant(dev.relayfarm.ir.NDArray.scalar(1f)), a));
        dev.relayfarm.ir.Function other = new dev.relayfarm.ir.Function(List.of(), a);
        IRModule bad = IRModule.fromMain(main).withFunction("other", other)
                .withFunction("third", new dev.relayfarm.ir.Function(List.of(), new dev.relayfarm.ir.GlobalVar("missing")));
        List<String> problems = WellFormed.problems(bad);
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("@other: %a"), problems.toString());
        assertTrue(problems.get(1).contains("unknown global @missing"), problems.toString());
    }

    @Test
    void generatorReachesEveryFeature() {
        Set<String> seen = new TreeSet<>();
        for (long seed = 0; seed < 300; seed++) seen.addAll(Coverage.of(RandomModules.module(seed)));
        Set<String> expected = new TreeSet<>();
        for (Class<?> c : Expr.class.getPermittedSubclasses()) expected.add("expr:" + c.getSimpleName());
        for (Class<?> c : Pattern.class.getPermittedSubclasses()) expected.add("pattern:" + c.getSimpleName());
        for (Class<?> c : AttrValue.class.getPermittedSubclasses()) expected.add("attr:" + c.getSimpleName());
        for (Class<?> c : Type.class.getPermittedSubclasses()) {
            if (!c.getSimpleName().equals("IncompleteType")) expected.add("type:" + c.getSimpleName());
        }
        expected.addAll(Coverage.expectedDims());
        for (DType d : List.of(DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.BFLOAT16, DType.INT8, DType.INT16,
                DType.INT32, DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64, DType.BOOL)) {
            expected.add("dtype:" + d);
        }
        expected.addAll(List.of("adt", "adt-with-type-params", "attr:nested-list", "call-type-args", "call:Constructor",
                "call:Function", "call:GlobalVar", "call:Op", "call:Var", "constant-lanes", "constant-scalar",
                "constant-tensor", "dag-sharing", "function-primitive", "function-type-params", "let-function", "match",
                "match?", "mutual-recursion", "self-recursion", "type:unit", "var-annotated", "var-shadowing",
                "var-unannotated"));
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(seen);
        assertEquals(Set.of(), missing, "features never generated in 300 seeds");
    }

    @Test
    void modulesAreReasonablySized() {
        long nodes = 0;
        int max = 0;
        for (long seed = 0; seed < 200; seed++) {
            int n = ExprTraversal.countNodes(RandomModules.module(seed));
            nodes += n;
            max = Math.max(max, n);
        }
        long avg = nodes / 200;
        // Big enough to nest every construct, small enough for 1,000-module suites to stay fast.
        assertTrue(avg >= 30 && avg <= 400, "average " + avg + " nodes");
        assertNotEquals(0, max);
    }
}
