package dev.relayfarm.types;

import static dev.relayfarm.types.Ir.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Var;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * 100,000-deep programs type-check without deep Java recursion: each test runs on a thread with a
 * 512 KiB stack (far below what a recursive walk of these programs would need).
 */
class LargeProgramTest {
    static final int N = 100_000;

    /** {@code fn (%x) { let %v0: Tensor[(2, 3)] = %x; let %v1 = t.add(%v0, %v0); ... %vN }}, %x unannotated. */
    static IRModule letChain(int n) {
        Var x = v("x");
        Var[] vs = new Var[n + 1];
        vs[0] = v("v0", f32(2, 3));
        for (int i = 1; i <= n; i++) vs[i] = v("v" + i);
        Expr body = vs[n];
        for (int i = n; i >= 1; i--) body = new Let(vs[i], op("t.add", vs[i - 1], vs[i - 1]), body);
        body = new Let(vs[0], x, body);
        return IRModule.fromMain(fn(List.of(x), body));
    }

    /** {@code fn (%x: Tensor[(2, 3)], %f: fn (..) -> ..) { %f(t.add(%f(t.add(... %x ...)))) }}: a nested dataflow chain. */
    static IRModule callChain(int n) {
        Var x = v("x", f32(2, 3));
        Var f = v("f", fnType(f32(2, 3), f32(2, 3)));
        Expr e = x;
        for (int i = 0; i < n; i++) e = i % 2 == 0 ? op("t.add", e, x) : call(f, e);
        return IRModule.fromMain(fn(List.of(x, f), e));
    }

    static <T> T onSmallStack(java.util.function.Supplier<T> work) throws InterruptedException {
        AtomicReference<T> out = new AtomicReference<>();
        AtomicReference<Throwable> err = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                out.set(work.get());
            } catch (Throwable e) {
                err.set(e);
            }
        }, "small-stack", 512 * 1024);
        t.start();
        t.join();
        if (err.get() != null) throw new AssertionError(err.get());
        return out.get();
    }

    @Test
    void hundredThousandLetChain() throws InterruptedException {
        IRModule m = letChain(N);
        InferResult r = onSmallStack(() -> TypeInference.infer(m, TestOps.RESOLVER));
        assertEquals("fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]", r.typeOf(gv("main")).toString());
        Function main = r.module().main().orElseThrow();
        // The parameter was annotated, so the whole body was rebuilt; every node has its type.
        int nodes = 0;
        int tensors = 0;
        for (Expr e : ExprTraversal.postOrder(main)) {
            if (r.typeOf(e).equals(f32(2, 3))) tensors++;
            nodes++;
        }
        assertEquals(4 * N + 4, nodes); // per let: Let, Call, Op, Var; plus %v0's let, %x, the function
        assertEquals(3 * N + 3, tensors); // all but the Op nodes and the function
    }

    @Test
    void hundredThousandNestedCalls() throws InterruptedException {
        IRModule m = callChain(N);
        InferResult r = onSmallStack(() -> TypeInference.infer(m, TestOps.RESOLVER));
        assertEquals("fn (Tensor[(2, 3), float32], fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]) "
                + "-> Tensor[(2, 3), float32]", r.typeOf(gv("main")).toString());
    }
}
