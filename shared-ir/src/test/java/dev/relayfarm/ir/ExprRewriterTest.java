package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class ExprRewriterTest {
    /** Renames every call to {@code add} into {@code subtract}. */
    private static final class AddToSub extends ExprRewriter {
        int calls;

        @Override
        protected Expr rewrite(Expr pre, Expr post) {
            calls++;
            if (post instanceof Call c && c.callee() instanceof Op op && op.name().equals("add")) {
                return new Call(Op.get("subtract"), c.args(), c.attrs(), c.typeArgs(), c.span());
            }
            return post;
        }
    }

    @Test
    void unchangedProgramComesBackIdentical() {
        Var x = Var.fresh("x");
        Expr e = Call.op("multiply", Call.op("exp", x), x);
        assertSame(e, new AddToSub().rewrite(e));
    }

    @Test
    void sharedNodesAreRewrittenOnceAndStayShared() {
        Var x = Var.fresh("x");
        Expr shared = Call.op("add", x, x);
        Tuple t = new Tuple(List.of(shared, shared));
        AddToSub r = new AddToSub();
        Tuple out = (Tuple) r.rewrite(t);
        assertSame(out.fields().get(0), out.fields().get(1));
        assertEquals("subtract", ((Op) ((Call) out.fields().get(0)).callee()).name());
        assertEquals(4, r.calls); // x, add, Op add, tuple — each once
    }

    @Test
    void hundredThousandDeepChainsRewriteWithoutStackOverflow() {
        Var x = Var.fresh("x");
        Expr e = x;
        for (int i = 0; i < 100_000; i++) e = Call.op("add", e, x);
        Expr out = new AddToSub().rewrite(e);
        int subtracts = 0;
        for (Expr n : ExprTraversal.postOrder(out)) {
            if (n instanceof Call c && ((Op) c.callee()).name().equals("subtract")) subtracts++;
        }
        assertEquals(100_000, subtracts);
        Expr lets = StructuralEqualityTest.letChain(100_000);
        assertSame(lets, new AddToSub().rewrite(lets));
    }

    @Test
    void childrenAreInEvaluationOrder() {
        Var x = Var.fresh("x");
        Expr c = new Constant(NDArray.scalar(1f));
        If i = new If(x, c, x);
        assertEquals(List.of(x, c, x), i.children());
        Call call = Call.op("add", c, x);
        assertEquals(List.of(Op.get("add"), c, x), call.children());
    }
}
