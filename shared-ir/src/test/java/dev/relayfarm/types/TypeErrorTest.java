package dev.relayfarm.types;

import static dev.relayfarm.types.Ir.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ill-typed programs: one clear diagnostic each, naming the place, the expectation and the actual type. */
class TypeErrorTest {

    private static List<Diagnostic> errors(IRModule m) {
        TypeException e = assertThrows(TypeException.class, () -> TypeInference.infer(m, TestOps.RESOLVER));
        return e.errors();
    }

    private static String only(IRModule m) {
        List<Diagnostic> errs = errors(m);
        assertEquals(1, errs.size(), errs.toString());
        return errs.get(0).toString();
    }

    @Test
    void ifConditionMustBeBoolScalar() {
        Var x = v("x", f32(3));
        If i = new If(x, cf(1), cf(2), at(4, 3));
        // The condition has no position of its own: the nearest enclosing one (the if) is used.
        assertEquals("model.relay:4:3: if condition must be a bool scalar (Tensor[(), bool]), got Tensor[(3), float32]",
                only(module("main", fn(List.of(x), i))));
        // With a source position on the condition, the diagnostic points at it.
        Var y = v("y", I32);
        Var c = new Var("c", null, 99_000_001L, at(2, 7));
        Let l = new Let(c, y, new If(c, cf(1), cf(2)));
        assertEquals("model.relay:2:7: if condition must be a bool scalar (Tensor[(), bool]), got int32",
                only(module("main", fn(List.of(y), l))));
    }

    @Test
    void tupleIndexOutOfBounds() {
        TupleGetItem g = new TupleGetItem(new Tuple(List.of(cf(1), ci(2))), 2, at(5, 11));
        assertEquals("model.relay:5:11: tuple index 2 is out of bounds for (float32, int32), which has 2 fields",
                only(module("main", fn(List.of(), g))));
    }

    @Test
    void tupleIndexOutOfBoundsFoundLater() {
        // The projection's tuple type is only known after the call: the deferred relation reports it.
        Var t = v("t");
        Var g = v("g");
        Function body = new Function(List.of(t), new TupleGetItem(t, 3, at(1, 20)));
        String d = only(module("main", fn(List.of(), new Let(g, body, call(g, new Tuple(List.of(cf(1))))))));
        assertEquals("model.relay:1:20: tuple index 3 is out of bounds for (float32,), which has 1 field", d);
    }

    @Test
    void branchMismatch() {
        If i = new If(cb(true), cf(1), new Tuple(List.of(cf(1), cf(2))), at(7, 1));
        assertEquals("model.relay:7:1: if branches have different types: then branch is float32, else branch is (float32, float32)",
                only(module("main", fn(List.of(), i))));
    }

    @Test
    void shapeMismatchNamesTheDimension() {
        Var x = v("x", f32(3, 4));
        Var y = v("y", f32(3, 5));
        If i = new If(cb(true), x, y, at(7, 1));
        assertEquals("model.relay:7:1: if branches have different types: then branch is Tensor[(3, 4), float32], "
                + "else branch is Tensor[(3, 5), float32] (dimension 1: 4 vs 5)", only(module("main", fn(List.of(x, y), i))));
    }

    @Test
    void wrongArgumentCount() {
        Var a = v("a", F32);
        Call c = new Call(gv("f"), List.of(cf(1), cf(2)), Attrs.EMPTY, List.of(), at(9, 5));
        assertEquals("model.relay:9:5: @f expects 1 argument, got 2 (its type is fn (float32) -> float32)",
                only(module("f", fn(List.of(a), a), "main", fn(List.of(), c))));
    }

    @Test
    void wrongArgumentType() {
        Var a = v("a", F32);
        Call c = new Call(gv("f"), List.of(ci(1)), Attrs.EMPTY, List.of(), at(9, 5));
        assertEquals("model.relay:9:5: argument 1 of @f: expected float32, got int32",
                only(module("f", fn(List.of(a), a), "main", fn(List.of(), c))));
    }

    @Test
    void unboundGlobal() {
        Call c = new Call(gv("nope"), List.of(), Attrs.EMPTY, List.of(), at(3, 9));
        assertEquals("model.relay:3:9: unbound global @nope (no such function in the module)",
                only(module("main", fn(List.of(), c))));
    }

    @Test
    void unboundVariable() {
        Var x = v("x");
        assertEquals("in @main: unbound variable %x", only(module("main", fn(List.of(), x))));
    }

    @Test
    void underConstrainedRelationNamesTheCall() {
        Var x = v("x", f32(2));
        Call never = new Call(Op.get("t.never"), List.of(x), Attrs.EMPTY, List.of(), at(12, 9));
        assertEquals("model.relay:12:9: t.never: under-constrained: cannot infer the types of this call "
                + "(types (Tensor[(2), float32], _))", only(module("main", fn(List.of(x), never))));
    }

    @Test
    void underConstrainedParameter() {
        // def @id(%x) { %x } has no use that fixes %x's type (no implicit generalization).
        Var x = v("x");
        assertEquals("in @id: cannot infer the type of parameter %x of @id (got _); add a type annotation",
                only(module("id", fn(List.of(x), x))));
    }

    @Test
    void monomorphicGlobalIsFixedByItsCaller() {
        // ... but a caller in a later component does fix it.
        Var x = v("x");
        InferResult r = TypeInference.infer(module("id", fn(List.of(x), x), "main", fn(List.of(), call(gv("id"), cf(1)))),
                TestOps.RESOLVER);
        assertEquals("fn (float32) -> float32", r.typeOf(gv("id")).toString());
    }

    @Test
    void relationErrorIsPrefixedWithPositionAndOperator() {
        Var d = v("d", f32(1, 3, 8, 8));
        Var w = v("w", f32(16, 4, 3, 3));
        Call conv = new Call(Op.get("t.conv"), List.of(d, w), Attrs.EMPTY, List.of(), at(12, 9));
        assertEquals("model.relay:12:9: t.conv: input channels 3 (data) do not match weight (16, 4, 3, 3) with groups=1",
                only(module("main", fn(List.of(d, w), conv))));
    }

    @Test
    void attributeErrorIsADiagnostic() {
        Var d = v("d", f32(1, 3, 8, 8));
        Call bad = new Call(Op.get("t.add"), List.of(d, d), Attrs.of("axis", TestOps.intAttr(1)), List.of(), at(2, 2));
        // The attribute parser already names the operator; it is not repeated.
        String msg = only(module("main", fn(List.of(d), bad)));
        assertTrue(msg.startsWith("model.relay:2:2: t.add: unknown attribute"), msg);
        assertTrue(msg.contains("axis"), msg);
    }

    @Test
    void relationOutputConflictsWithAnnotation() {
        Var x = v("x", f32(2));
        Var y = v("y", f32(3));
        Call add = new Call(Op.get("t.add"), List.of(x, x), Attrs.EMPTY, List.of(), at(4, 13));
        assertEquals("model.relay:4:13: t.add: expected Tensor[(3), float32], got Tensor[(2), float32] (dimension 0: 3 vs 2)",
                only(module("main", fn(List.of(x), new Let(y, add, y)))));
    }

    @Test
    void unknownOperatorAndArity() {
        Call c = new Call(Op.get("t.nope"), List.of(), Attrs.EMPTY, List.of(), at(1, 1));
        assertEquals("model.relay:1:1: unknown operator 't.nope'", only(module("main", fn(List.of(), c))));
        Call c2 = new Call(Op.get("t.add"), List.of(cf(1)), Attrs.EMPTY, List.of(), at(1, 1));
        assertEquals("model.relay:1:1: t.add expects 2 arguments, got 1", only(module("main", fn(List.of(), c2))));
    }

    @Test
    void rigidTypeVariable() {
        // def @bad[A](%x: A) -> A { 1f }
        TypeVar a = TypeVar.fresh("A");
        Var x = v("x", a);
        Function bad = new Function(List.of(x), cf(1), a, List.of(a), Attrs.EMPTY, new Span("p.relay", 1, 1));
        assertEquals("p.relay:1:1: @bad returns float32, but its return type is A", only(module("bad", bad)));
    }

    @Test
    void errorsDoNotCascadeToCallers() {
        // @broken fails; @main calls the unannotated @broken and is skipped instead of reporting noise;
        // @other has its own, independent error.
        Var x = v("x");
        Function broken = fn(List.of(x), new If(ci(1), x, x));
        Function main = fn(List.of(), call(gv("broken"), cf(1)));
        Function other = fn(List.of(), new TupleGetItem(new Tuple(List.of()), 0));
        List<Diagnostic> errs = errors(module("broken", broken, "main", main, "other", other));
        assertEquals(2, errs.size(), errs.toString());
        assertEquals("in @broken: if condition must be a bool scalar (Tensor[(), bool]), got int32", errs.get(0).toString());
        assertEquals("in @other: tuple index 0 is out of bounds for (), which has 0 fields", errs.get(1).toString());
    }

    @Test
    void matchOnWrongType() {
        Var n = v("n", F32);
        Match m = new Match(n, List.of(new Clause(new Pattern.Ctor(Nat.Z, List.of()), cf(1))), true, at(6, 3));
        assertEquals("model.relay:6:3: pattern Z matches values of type Nat, but the matched value has type float32",
                only(module(Nat.DATA, "main", fn(List.of(n), m))));
    }

    @Test
    void callingANonFunction() {
        Var x = v("x", F32);
        Call c = new Call(x, List.of(), Attrs.EMPTY, List.of(), at(2, 4));
        assertEquals("model.relay:2:4: %x is not a function: it has type float32", only(module("main", fn(List.of(x), c))));
    }

    @Test
    void occursCheck() {
        // let %f = fn (%g) { %g(%g) }: infinite type
        Var g = v("g");
        Var f = v("f");
        String d = only(module("main", fn(List.of(), new Let(f, fn(List.of(g), call(g, g)), f))));
        assertEquals(true, d.contains("infinite type"), d);
    }

    @SuppressWarnings("unused")
    private static GlobalVar unused() {
        return null;
    }
}
