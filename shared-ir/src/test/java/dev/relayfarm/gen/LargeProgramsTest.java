package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralEquality.Mismatch;
import dev.relayfarm.ir.StructuralHash;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The 100,000-node dataflow chain and 100,000-deep let chain through the IR utilities, on the
 * surefire thread with the default stack: any per-node recursion would overflow here.
 */
class LargeProgramsTest {
    static final int N = 100_000;

    static Stream<Arguments> chains() {
        return Stream.of(
                Arguments.of("dataflow chain", (IntFunction<IRModule>) RandomModules::dataflowChain),
                Arguments.of("let chain", (IntFunction<IRModule>) RandomModules::letChain));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("chains")
    void equalityHashAndRewritingWorkWithoutRecursion(String name, IntFunction<IRModule> build) {
        IRModule a = build.apply(N);
        IRModule b = build.apply(N); // built again: no node shared with a
        assertEquals(Optional.empty(), StructuralEquality.diff(a, a));
        assertEquals(Optional.empty(), StructuralEquality.diff(a, b));
        assertEquals(StructuralHash.hash(a), StructuralHash.hash(b));

        Function main = a.main().orElseThrow();
        assertSame(main, new ExprRewriter() {}.rewrite(main), "a rewrite that changes nothing returns the same node");

        IRModule renamed = AlphaRename.rename(a);
        assertEquals(Optional.empty(), StructuralEquality.diff(b, renamed));
        assertEquals(StructuralHash.hash(a), StructuralHash.hash(renamed));
        assertEquals(List.of(), WellFormed.problems(renamed));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("chains")
    void theDeepestDifferenceIsFoundWithItsPath(String name, IntFunction<IRModule> build) {
        Function main = build.apply(N).main().orElseThrow();
        Constant deepest = deepestConstant(main);
        Expr changed = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return pre == deepest ? new Constant(NDArray.scalar(-1f)) : post;
            }
        }.rewrite(main);
        assertNotSame(main, changed);
        Mismatch m = StructuralEquality.diff(main, changed).orElseThrow();
        assertEquals("different constant values", m.reason());
        // At least one path step per level: the mismatch is reported where it is, not at the root.
        assertTrue(m.path().length() > N, "path of length " + m.path().length());
        // Deterministic inputs, so this cannot flake: the change at the bottom reaches the root hash.
        assertTrue(StructuralHash.hash(main) != StructuralHash.hash(changed));
    }

    /** The constant farthest from the root; reverse post-order sees every parent before its children. */
    private static Constant deepestConstant(Expr root) {
        List<Expr> order = ExprTraversal.postOrder(root);
        IdentityHashMap<Expr, Integer> depth = new IdentityHashMap<>();
        depth.put(root, 0);
        Constant best = null;
        for (int i = order.size() - 1; i >= 0; i--) {
            Expr e = order.get(i);
            int d = depth.get(e);
            for (Expr c : e.children()) depth.merge(c, d + 1, Math::max);
            if (e instanceof Constant c && (best == null || d > depth.get(best))) best = c;
        }
        return best;
    }
}
