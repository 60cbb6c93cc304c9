package dev.relayfarm.types;

import static dev.relayfarm.types.Ir.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Well-typed programs: the inferred signatures and node types. */
class TypeInferenceTest {

    private static InferResult infer(IRModule m) {
        InferResult r = TypeInference.infer(m, TestOps.RESOLVER);
        assertFullyTyped(r);
        return r;
    }

    private static String sig(InferResult r, String global) {
        return r.typeOf(gv(global)).toString();
    }

    @Test
    void identity() {
        Var x = v("x", f32(3, 4));
        InferResult r = infer(module("main", fn(List.of(x), x)));
        assertEquals("fn (Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32]", sig(r, "main"));
        Function main = r.module().main().orElseThrow();
        assertEquals(f32(3, 4), main.retType());
        // Parameters were annotated already, so the body is the very same node.
        assertSame(x, main.body());
    }

    @Test
    void unannotatedParameterIsInferredAndFilledIn() {
        Var x = v("x");
        Var y = v("y", f32(2));
        // %x's type flows from the if's other branch, then into t.add.
        InferResult r = infer(module("main", fn(List.of(x, y), op("t.add", new If(cb(true), x, y), y))));
        assertEquals("fn (Tensor[(2), float32], Tensor[(2), float32]) -> Tensor[(2), float32]", sig(r, "main"));
        Function main = r.module().main().orElseThrow();
        assertNotSame(x, main.params().get(0));
        assertEquals(f32(2), main.params().get(0).annotation());
        // The rebuilt body uses the new, annotated parameter, and the table covers the new nodes.
        If cond = (If) ((Call) main.body()).args().get(0);
        assertSame(main.params().get(0), cond.thenBranch());
        assertEquals(f32(2), r.typeOf(cond));
    }

    @Test
    void letShadowingKeepsVariablesApart() {
        // let %x = 1f; let %x = (%x, %x); %x
        Var x1 = v("x");
        Var x2 = v("x");
        Let body = new Let(x1, cf(1), new Let(x2, new Tuple(List.of(x1, x1)), x2));
        InferResult r = infer(module("main", fn(List.of(), body)));
        assertEquals(F32, r.typeOf(x1));
        assertEquals("(float32, float32)", r.typeOf(x2).toString());
        assertEquals("fn () -> (float32, float32)", sig(r, "main"));
    }

    @Test
    void closureCapturesOuterVariable() {
        // fn (%x: float32) { let %f = fn (%y) { (%x, %y) }; %f(1) }
        Var x = v("x", F32);
        Var y = v("y");
        Var f = v("f");
        Function inner = fn(List.of(y), new Tuple(List.of(x, y)));
        InferResult r = infer(module("main", fn(List.of(x), new Let(f, inner, call(f, ci(1))))));
        assertEquals("fn (float32) -> (float32, int32)", sig(r, "main"));
        assertEquals("fn (int32) -> (float32, int32)", r.typeOf(f).toString());
    }

    @Test
    void higherOrderFunction() {
        // def @apply(%g, %a) { %g(%a) }   def @main(%z: Tensor[(3), float32]) { @apply(fn (%q) { t.add(%q, %q) }, %z) }
        Var g = v("g");
        Var a = v("a");
        Var z = v("z", f32(3));
        Var q = v("q");
        IRModule m = module(
                "main", fn(List.of(z), call(gv("apply"), fn(List.of(q), op("t.add", q, q)), z)),
                "apply", fn(List.of(g, a), call(g, a)));
        InferResult r = infer(m);
        assertEquals("fn (fn (Tensor[(3), float32]) -> Tensor[(3), float32], Tensor[(3), float32]) -> Tensor[(3), float32]",
                sig(r, "apply"));
    }

    @Test
    void factorialWithRecursiveLet() {
        // let %fact = fn (%n: int32) -> int32 { if (%n == 0) { 1 } else { %n * %fact(%n - 1) } }; %fact(5)
        // (t.add stands in for * and -: the types are the same)
        Var fact = v("fact");
        Var n = v("n", I32);
        Function body = fn(List.of(n),
                new If(op("t.equal", n, ci(0)), ci(1), op("t.add", n, call(fact, op("t.add", n, ci(-1))))));
        InferResult r = infer(module("main", fn(List.of(), new Let(fact, body, call(fact, ci(5))))));
        assertEquals("fn (int32) -> int32", r.typeOf(fact).toString());
        assertEquals("fn () -> int32", sig(r, "main"));
    }

    @Test
    void ackermannOnNatWithGlobalRecursionAndNoAnnotations() {
        // def @ack(%m, %n) { match (%m) { Z => S(%n), S(%m1) => match (%n) { Z => @ack(%m1, S(Z)),
        //                                         S(%n1) => @ack(%m1, @ack(%m, %n1)) } } }
        Var m = v("m");
        Var n = v("n");
        Var m1 = v("m1");
        Var n1 = v("n1");
        var ack = gv("ack");
        Match inner = new Match(n, List.of(
                new Clause(new Pattern.Ctor(Nat.Z, List.of()), call(ack, m1, call(Nat.S, Nat.Z))),
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(n1))), call(ack, m1, call(ack, m, n1)))));
        Match outer = new Match(m, List.of(
                new Clause(new Pattern.Ctor(Nat.Z, List.of()), call(Nat.S, n)),
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(m1))), inner)));
        IRModule mod = module(Nat.DATA,
                "main", fn(List.of(), call(ack, call(Nat.S, Nat.Z), Nat.Z)),
                "ack", fn(List.of(m, n), outer));
        InferResult r = infer(mod);
        assertEquals("fn (Nat, Nat) -> Nat", sig(r, "ack"));
        assertEquals("fn () -> Nat", sig(r, "main"));
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        assertEquals("Nat", r.typeOf(m1).toString());
    }

    /** {@code def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B]} and a left fold. */
    private static IRModule listProgram() {
        TypeVar a = TypeVar.fresh("A");
        TypeVar b = TypeVar.fresh("B");
        Var f = v("f", fnType(b, a));
        Var xs = v("xs", Lists.of(a));
        Var h = v("h");
        Var t = v("t");
        Function map = polyFn(List.of(a, b), List.of(f, xs), new Match(xs, List.of(
                new Clause(new Pattern.Ctor(Lists.CONS, List.of(new Pattern.Bind(h), new Pattern.Bind(t))),
                        call(Lists.CONS, call(f, h), call(gv("map"), f, t))),
                new Clause(new Pattern.Ctor(Lists.NIL, List.of()), Lists.NIL))), Lists.of(b));
        TypeVar fa = TypeVar.fresh("A");
        TypeVar fb = TypeVar.fresh("B");
        Var g = v("f", fnType(fa, fa, fb));
        Var acc = v("acc", fa);
        Var ys = v("xs", Lists.of(fb));
        Var y = v("y");
        Var rest = v("rest");
        Function foldl = polyFn(List.of(fa, fb), List.of(g, acc, ys), new Match(ys, List.of(
                new Clause(new Pattern.Ctor(Lists.CONS, List.of(new Pattern.Bind(y), new Pattern.Bind(rest))),
                        call(gv("foldl"), g, call(g, acc, y), rest)),
                new Clause(new Pattern.Ctor(Lists.NIL, List.of()), acc))), fa);
        // def @main() { let %l = Cons(1f, Cons(2f, Nil)); let %d = @map(fn (%x) { (%x, %x) }, %l);
        //               (@foldl(fn (%s, %e) { t.add(%s, %e) }, 0f, %l), %d, @map(fn (%i: int32) { %i }, Cons(1, Nil))) }
        Var l = v("l");
        Var d = v("d");
        Var x = v("x");
        Var s = v("s");
        Var e = v("e");
        Var i = v("i", I32);
        Function main = fn(List.of(), new Let(l, call(Lists.CONS, cf(1), call(Lists.CONS, cf(2), Lists.NIL)),
                new Let(d, call(gv("map"), fn(List.of(x), new Tuple(List.of(x, x))), l),
                        new Tuple(List.of(
                                call(gv("foldl"), fn(List.of(s, e), op("t.add", s, e)), cf(0), l),
                                d,
                                call(gv("map"), fn(List.of(i), i), call(Lists.CONS, ci(1), Lists.NIL)))))));
        return module(Lists.DATA, "main", main, "map", map, "foldl", foldl);
    }

    @Test
    void listMapAndFoldArePolymorphic() {
        InferResult r = infer(listProgram());
        assertEquals("fn [A, B](fn (A) -> B, List[A]) -> List[B]", sig(r, "map"));
        assertEquals("fn [A, B](fn (A, B) -> A, A, List[B]) -> A", sig(r, "foldl"));
        assertEquals("fn () -> (float32, List[(float32, float32)], List[int32])", sig(r, "main"));
        // Type arguments inferred per call site.
        Function main = r.module().main().orElseThrow();
        Let let = (Let) main.body();
        Let let2 = (Let) let.body();
        Call mapCall = (Call) let2.value();
        assertEquals("[float32, (float32, float32)]", r.typeArgs(mapCall).toString());
        Call cons = (Call) let.value();
        assertEquals("[float32]", r.typeArgs(cons).toString());
        assertEquals("fn [A](A, List[A]) -> List[A]", r.typeOf(cons.callee()).toString());
    }

    @Test
    void mutualRecursionWithoutAnnotations() {
        // def @even(%n) { match (%n) { Z => True, S(%m) => @odd(%m) } }
        // def @odd(%n) { match (%n) { Z => False, S(%m) => @even(%m) } }
        Var n1 = v("n");
        Var m1 = v("m");
        Var n2 = v("n");
        Var m2 = v("m");
        Function even = fn(List.of(n1), new Match(n1, List.of(
                new Clause(new Pattern.Ctor(Nat.Z, List.of()), cb(true)),
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(m1))), call(gv("odd"), m1)))));
        Function odd = fn(List.of(n2), new Match(n2, List.of(
                new Clause(new Pattern.Ctor(Nat.Z, List.of()), cb(false)),
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(m2))), call(gv("even"), m2)))));
        // @main references @even before it is defined.
        IRModule m = module(Nat.DATA, "main", fn(List.of(), call(gv("even"), call(Nat.S, Nat.Z))), "even", even, "odd", odd);
        InferResult r = infer(m);
        assertEquals("fn (Nat) -> bool", sig(r, "even"));
        assertEquals("fn (Nat) -> bool", sig(r, "odd"));
        assertEquals("fn () -> bool", sig(r, "main"));
    }

    @Test
    void polymorphicIdentityInstantiatedPerCallSite() {
        TypeVar a = TypeVar.fresh("A");
        Var x = v("x", a);
        Call c1 = call(gv("id"), cf(1));
        Call c2 = call(gv("id"), new Tuple(List.of(ci(1), cb(true))));
        InferResult r = infer(module(
                "id", polyFn(List.of(a), List.of(x), x, a),
                "main", fn(List.of(), new Tuple(List.of(c1, c2)))));
        assertEquals("fn [A](A) -> A", sig(r, "id"));
        assertEquals("fn () -> (float32, (int32, bool))", sig(r, "main"));
        assertEquals(List.of(F32), r.typeArgs(c1));
    }

    @Test
    void referencesReadAndWrite() {
        // let %r = ref(1f); let %u = ref_write(%r, 2f); (ref_read(%r), %u)
        Var rv = v("r");
        Var u = v("u");
        Let body = new Let(rv, new RefCreate(cf(1)), new Let(u, new RefWrite(rv, cf(2)),
                new Tuple(List.of(new RefRead(rv), u))));
        InferResult r = infer(module("main", fn(List.of(), body)));
        assertEquals(new RefType(F32), r.typeOf(rv));
        assertEquals("fn () -> (float32, ())", sig(r, "main"));
    }

    @Test
    void tupleProjectionOfNotYetKnownTupleIsDeferred() {
        // fn (%p) { let %g = fn (%t) { %t.1 }; %g((1f, 2)) }: %t's type is unknown when .1 is seen.
        Var t = v("t");
        Var g = v("g");
        Function body = fn(List.of(t), new TupleGetItem(t, 1));
        InferResult r = infer(module("main", fn(List.of(), new Let(g, body, call(g, new Tuple(List.of(cf(1), ci(2))))))));
        assertEquals("fn () -> int32", sig(r, "main"));
        assertEquals("fn ((float32, int32)) -> int32", r.typeOf(g).toString());
    }

    @Test
    void symbolicDimensionsSimplify() {
        TensorType tn = new TensorType(List.of(Dim.sym("n"), Dim.of(4)), DType.FLOAT32);
        Var x = v("x", tn);
        InferResult r = infer(module("main", fn(List.of(x), op("t.concat0", x, x))));
        assertEquals("fn (Tensor[(n, 4), float32]) -> Tensor[(2 * n, 4), float32]", sig(r, "main"));
        // An annotation written n + n unifies with 2 * n and prints simplified.
        Var y = v("y", tn);
        TensorType declared = new TensorType(List.of(dev.relayfarm.ir.Dims.add(Dim.sym("n"), Dim.sym("n")), Dim.of(4)),
                DType.FLOAT32);
        Var z = v("z", new TensorType(List.of(new Dim.Bin(Dim.BinOp.ADD, Dim.sym("n"), Dim.sym("n")), Dim.of(4)), DType.FLOAT32));
        InferResult r2 = infer(module("main", fn(List.of(y), new Let(z, op("t.concat0", y, y), z))));
        assertEquals("fn (Tensor[(n, 4), float32]) -> " + declared, sig(r2, "main"));
        assertEquals("Tensor[(2 * n, 4), float32]", r2.typeOf(z).toString());
    }

    @Test
    void anyIsGradual() {
        // Relations propagate Any: t.add(Tensor[(?, 4)], Tensor[(3, 4)]) : Tensor[(?, 4)]
        TensorType any4 = new TensorType(List.of(Dim.ANY, Dim.of(4)), DType.FLOAT32);
        Var x = v("x", any4);
        Var y = v("y", f32(3, 4));
        InferResult r = infer(module("main", fn(List.of(x, y), op("t.add", x, y))));
        assertEquals("fn (Tensor[(?, 4), float32], Tensor[(3, 4), float32]) -> Tensor[(?, 4), float32]", sig(r, "main"));
        // A concrete dimension is accepted where Any is expected, and unification keeps the more precise one:
        // %z is first known as (?, 4), then meets (3, 4) in the if.
        Var a = v("a", any4);
        Var b = v("b", f32(3, 4));
        Var zz = v("z");
        Var k = v("k");
        InferResult r2 = infer(module("main", fn(List.of(a, b),
                new Let(zz, a, new Let(k, new If(cb(true), zz, b), zz)))));
        assertEquals(f32(3, 4), r2.typeOf(zz));
        // The annotated parameter keeps its declared, less precise type.
        assertEquals(any4, r2.typeOf(a));
    }

    @Test
    void dtypesMustMatchButFunctionAttributesAreIrrelevant() {
        Var x = v("x", f32(2));
        Function prim = fn(List.of(x), op("t.add", x, x))
                .withAttrs(dev.relayfarm.ir.Attrs.of(Function.PRIMITIVE, TestOps.intAttr(1)));
        Var y = v("y", f32(2));
        InferResult r = infer(module("main", fn(List.of(y), call(prim, y))));
        assertEquals("fn (Tensor[(2), float32]) -> Tensor[(2), float32]", sig(r, "main"));
    }

    @Test
    void nonExhaustiveMatchWarnsAndIncompleteMatchDoesNot() {
        Var n = v("n", Nat.NAT);
        Var p = v("p");
        Match complete = new Match(n, List.of(
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(p))))), p)),
                true, new Span("nat.relay", 3, 5));
        InferResult r = infer(module(Nat.DATA, "main", fn(List.of(n), complete)));
        assertEquals(1, r.warnings().size());
        assertEquals("nat.relay:3:5: warning: match is not exhaustive: Z is not covered (use match? to allow this)",
                r.warnings().get(0).toString());
        // With Z covered, the witness is S(Z).
        Var n2 = v("n", Nat.NAT);
        Var p2 = v("p");
        Match m2 = new Match(n2, List.of(
                new Clause(new Pattern.Ctor(Nat.Z, List.of()), n2),
                new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(p2))))), p2)));
        assertTrue(TypeInference.infer(module(Nat.DATA, "main", fn(List.of(n2), m2)), TestOps.RESOLVER).warnings().get(0)
                .message().contains("S(Z) is not covered"));
        Var n3 = v("n", Nat.NAT);
        Var p3 = v("p");
        Match partial = new Match(n3, List.of(new Clause(new Pattern.Ctor(Nat.S, List.of(new Pattern.Bind(p3))), p3)),
                false, Span.NONE);
        assertTrue(infer(module(Nat.DATA, "main", fn(List.of(n3), partial))).warnings().isEmpty());
    }

    @Test
    void tuplePatternsAndWildcards() {
        Var t = v("t", new dev.relayfarm.ir.TupleType(List.of(F32, I32)));
        Var a = v("a");
        Match m = new Match(t, List.of(new Clause(new Pattern.TuplePattern(List.of(new Pattern.Bind(a), Pattern.WILDCARD)), a)));
        InferResult r = infer(module("main", fn(List.of(t), m)));
        assertEquals("fn ((float32, int32)) -> float32", sig(r, "main"));
        assertTrue(r.warnings().isEmpty());
    }

    @Test
    void opCallWithAttributes() {
        Var d = v("d", f32(1, 16, 8, 8));
        Var w = v("w", f32(8, 4, 3, 3));
        Call conv = new Call(dev.relayfarm.ir.Op.get("t.conv"), List.of(d, w),
                dev.relayfarm.ir.Attrs.of("groups", TestOps.intAttr(4)));
        InferResult r = infer(module("main", fn(List.of(d, w), conv)));
        assertEquals("Tensor[(1, 8), float32]", r.typeOf(conv).toString());
        assertEquals("fn (Tensor[(1, 16, 8, 8), float32], Tensor[(8, 4, 3, 3), float32]) -> Tensor[(1, 8), float32]",
                r.typeOf(conv.callee()).toString());
    }
}
