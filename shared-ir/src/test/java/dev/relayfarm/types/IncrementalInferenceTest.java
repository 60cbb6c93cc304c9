package dev.relayfarm.types;

import static dev.relayfarm.types.Ir.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Var;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Re-inferring one changed function against the known types of the others. */
class IncrementalInferenceTest {

    /** {@code @helper(%a) = t.add(%a, %a)} (unannotated, fixed by @main), {@code @main(%x: Tensor[(4)]) = @helper(%x)}. */
    private static IRModule program() {
        Var a = v("a");
        Var x = v("x", f32(4));
        return module("helper", fn(List.of(a), new dev.relayfarm.ir.If(cb(true), a, a)),
                "main", fn(List.of(x), call(gv("helper"), x)));
    }

    @Test
    void reinfersOnlyTheChangedFunction() {
        InferResult first = TypeInference.infer(program(), TestOps.RESOLVER);
        assertEquals("fn (Tensor[(4), float32]) -> Tensor[(4), float32]", first.typeOf(gv("helper")).toString());
        Function helper = first.module().function("helper").orElseThrow();

        // A pass rewrites @main: main(%x) = (@helper(%x), %x)
        Var x = v("x", f32(4));
        Function newMain = fn(List.of(x), new Tuple(List.of(call(gv("helper"), x), x)));
        IRModule changed = first.module().withFunction("main", newMain);
        InferResult second = TypeInference.inferFunction(changed, gv("main"), first, TestOps.RESOLVER);

        assertEquals("fn (Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32])",
                second.typeOf(gv("main")).toString());
        // @helper was not re-checked: same function object, its table entries carried over.
        assertSame(helper, second.module().function("helper").orElseThrow());
        for (Expr e : ExprTraversal.postOrder(helper)) assertEquals(first.typeOf(e), second.typeOf(e));
        assertFullyTyped(second);
    }

    @Test
    void errorsInTheChangedFunctionAreReported() {
        InferResult first = TypeInference.infer(program(), TestOps.RESOLVER);
        Function bad = fn(List.of(), call(gv("helper"), cf(1)));
        IRModule changed = first.module().withFunction("main", bad);
        TypeException e = assertThrows(TypeException.class,
                () -> TypeInference.inferFunction(changed, gv("main"), first, TestOps.RESOLVER));
        assertEquals("in @main: argument 1 of @helper: expected Tensor[(4), float32], got float32 (rank 1 vs 0)", e.errors().get(0).toString());
    }

    @Test
    void knownTypesGivenExplicitly() {
        Var y = v("y");
        Function main = fn(List.of(y), call(gv("ext"), y));
        Var p = v("p");
        IRModule m = module("ext", fn(List.of(p), p), "main", main);
        Map<GlobalVar, FuncType> known = Map.of(gv("ext"), fnType(I32, I32));
        InferResult r = TypeInference.inferFunction(m, gv("main"), known, TestOps.RESOLVER);
        assertEquals("fn (int32) -> int32", r.typeOf(gv("main")).toString());
        // Without a known type for the unannotated @ext, its use is an error, not a guess.
        TypeException e = assertThrows(TypeException.class,
                () -> TypeInference.inferFunction(m, gv("main"), Map.of(), TestOps.RESOLVER));
        assertTrue(e.getMessage().contains("the type of @ext is not known"), e.getMessage());
    }
}
