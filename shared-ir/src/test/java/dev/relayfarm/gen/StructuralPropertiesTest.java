package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralEquality.Mismatch;
import dev.relayfarm.ir.StructuralHash;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * Properties of {@link StructuralEquality}, {@link StructuralHash}, {@link ExprTraversal} and
 * {@link ExprRewriter} over generated modules: reflexive, alpha-invariant, sensitive to a single
 * mutation (with a path to it), and the rewriter's copy-on-write promise.
 */
class StructuralPropertiesTest {
    private static final int MODULES = GeneratorTest.MODULES;

    @Test
    void aModuleEqualsItselfAndHashesStably() {
        for (long seed = 0; seed < MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            long s = seed;
            assertEquals(Optional.empty(), StructuralEquality.diff(m, m), () -> "seed " + s);
            assertEquals(StructuralHash.hash(m), StructuralHash.hash(m), "seed " + s);
        }
    }

    @Test
    void anAlphaRenamedCopyIsEqualAndHashesAlike() {
        for (long seed = 0; seed < MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            IRModule renamed = AlphaRename.rename(m);
            long s = seed;
            assertEquals(Optional.empty(), StructuralEquality.diff(m, renamed), () -> "seed " + s);
            assertEquals(Optional.empty(), StructuralEquality.diff(renamed, m), () -> "seed " + s + " (reversed)");
            assertEquals(StructuralHash.hash(m), StructuralHash.hash(renamed), "seed " + s);
            assertEquals(List.of(), WellFormed.problems(renamed), "seed " + s);
            if (AlphaRename.renamedVariables(m) > 0) assertFalse(shareAVariable(m, renamed), "seed " + s + ": the copy reuses a variable");
        }
    }

    @Test
    void aMutatedConstantIsNotEqualAndDiffSaysWhere() {
        assertMutationsDetected(Mutations::constant, "different constant values");
    }

    @Test
    void aMutatedAttributeIsNotEqualAndDiffSaysWhere() {
        assertMutationsDetected(Mutations::attribute, "attributes");
    }

    @Test
    void aMutatedOperatorIsNotEqualAndDiffSaysWhere() {
        assertMutationsDetected(Mutations::operator, "different operators");
    }

    @Test
    void mutationsAreAlsoDetectedAfterAlphaRenaming() {
        Random r = new Random(42);
        for (long seed = 0; seed < 200; seed++) {
            IRModule renamed = AlphaRename.rename(RandomModules.module(seed));
            Optional<IRModule> mutated = Mutations.constant(RandomModules.module(seed), r);
            if (mutated.isEmpty()) continue;
            Optional<Mismatch> d = StructuralEquality.diff(renamed, mutated.get());
            assertTrue(d.isPresent(), "seed " + seed);
            assertEquals("different constant values", d.get().reason(), "seed " + seed + ": " + d.get());
        }
    }

    @Test
    void anIdentityRewriteReturnsTheSameNodes() {
        for (long seed = 0; seed < MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            ExprRewriter identity = new ExprRewriter() {};
            for (Function f : m.functions().values()) assertSame(f, identity.rewrite(f), "seed " + seed);
        }
    }

    @Test
    void aRebuildingRewriteKeepsSharingAndEquality() {
        for (long seed = 0; seed < MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            // Rebuilds every non-leaf node (a fresh record over the same children), as a pass that touches everything would.
            ExprRewriter rebuild = new ExprRewriter() {
                @Override
                protected Expr rewrite(Expr pre, Expr post) {
                    return post.children().isEmpty() ? post : copy(post);
                }
            };
            for (Function f : m.functions().values()) {
                Expr g = rebuild.rewrite(f);
                assertEquals(ExprTraversal.countNodes(f), ExprTraversal.countNodes(g), "seed " + seed + ": sharing lost or gained");
                assertTrue(StructuralEquality.equal(f, g), "seed " + seed);
                assertEquals(StructuralHash.hash(f), StructuralHash.hash(g), "seed " + seed);
            }
        }
    }

    @Test
    void postOrderVisitsChildrenFirstAndEachNodeOnce() {
        for (long seed = 0; seed < MODULES; seed++) {
            for (Function f : RandomModules.module(seed).functions().values()) {
                List<Expr> order = ExprTraversal.postOrder(f);
                IdentityHashMap<Expr, Integer> position = new IdentityHashMap<>();
                for (int i = 0; i < order.size(); i++) assertEquals(null, position.put(order.get(i), i), "seed " + seed + ": visited twice");
                for (Expr e : order) {
                    for (Expr c : e.children()) assertTrue(position.get(c) < position.get(e), "seed " + seed + ": child after parent");
                }
                assertSame(f, order.getLast());
            }
        }
    }

    private static Expr copy(Expr e) {
        return switch (e) {
            case dev.relayfarm.ir.Tuple t -> new dev.relayfarm.ir.Tuple(t.fields(), t.span());
            case dev.relayfarm.ir.TupleGetItem t -> new dev.relayfarm.ir.TupleGetItem(t.tuple(), t.index(), t.span());
            case dev.relayfarm.ir.Let l -> new dev.relayfarm.ir.Let(l.var(), l.value(), l.body(), l.span());
            case dev.relayfarm.ir.If i -> new dev.relayfarm.ir.If(i.cond(), i.thenBranch(), i.elseBranch(), i.span());
            case Function f -> new Function(f.params(), f.body(), f.retType(), f.typeParams(), f.attrs(), f.span());
            case dev.relayfarm.ir.Call c -> new dev.relayfarm.ir.Call(c.callee(), c.args(), c.attrs(), c.typeArgs(), c.span());
            case dev.relayfarm.ir.Match m -> new dev.relayfarm.ir.Match(m.data(), m.clauses(), m.complete(), m.span());
            case dev.relayfarm.ir.RefCreate r -> new dev.relayfarm.ir.RefCreate(r.value(), r.span());
            case dev.relayfarm.ir.RefRead r -> new dev.relayfarm.ir.RefRead(r.ref(), r.span());
            case dev.relayfarm.ir.RefWrite r -> new dev.relayfarm.ir.RefWrite(r.ref(), r.value(), r.span());
            default -> e;
        };
    }

    private static void assertMutationsDetected(BiFunction<IRModule, Random, Optional<IRModule>> mutate, String reason) {
        Random r = new Random(7);
        int mutated = 0;
        for (long seed = 0; seed < MODULES; seed++) {
            IRModule m = RandomModules.module(seed);
            Optional<IRModule> changed = mutate.apply(m, r);
            if (changed.isEmpty()) continue;
            mutated++;
            long s = seed;
            Optional<Mismatch> d = StructuralEquality.diff(m, changed.get());
            assertTrue(d.isPresent(), () -> "seed " + s + ": mutation not detected");
            assertTrue(d.get().reason().contains(reason), () -> "seed " + s + ": " + d.get());
            // The path names the global and walks into it: "@main.body.args[1]" or similar.
            assertTrue(d.get().path().startsWith("@") && d.get().path().length() > 1, () -> "seed " + s + ": " + d.get());
            assertFalse(StructuralEquality.equal(changed.get(), m), "seed " + s + " (reversed)");
        }
        assertTrue(mutated > MODULES / 4, "only " + mutated + " of " + MODULES + " modules could be mutated");
    }

    private static boolean shareAVariable(IRModule a, IRModule b) {
        Set<Expr> vars = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Function f : a.functions().values()) {
            f.params().forEach(vars::add);
            for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof dev.relayfarm.ir.Var) vars.add(e);
        }
        for (Function f : b.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) if (e instanceof dev.relayfarm.ir.Var && vars.contains(e)) return true;
            for (var p : f.params()) if (vars.contains(p)) return true;
        }
        return false;
    }
}
