package dev.relayfarm.interp;

import static dev.relayfarm.interp.Ir.add;
import static dev.relayfarm.interp.Ir.call;
import static dev.relayfarm.interp.Ir.eq;
import static dev.relayfarm.interp.Ir.fn;
import static dev.relayfarm.interp.Ir.i32;
import static dev.relayfarm.interp.Ir.ifte;
import static dev.relayfarm.interp.Ir.mul;
import static dev.relayfarm.interp.Ir.sub;
import static dev.relayfarm.interp.Ir.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Algebraic data types: Peano naturals and lists with higher-order functions over them. */
class AdtInterpreterTest {
    static final GlobalTypeVar NAT = new GlobalTypeVar("Nat");
    static final Constructor Z = new Constructor("Z", List.of(), NAT, 0);
    static final Constructor S = new Constructor("S", List.of(NAT), NAT, 1);

    static final GlobalTypeVar LIST = new GlobalTypeVar("List");
    static final TypeVar A = TypeVar.fresh("A");
    static final Constructor CONS = new Constructor("Cons", List.of(A, new TypeCall(LIST, List.of(A))), LIST, 0);
    static final Constructor NIL = new Constructor("Nil", List.of(), LIST, 1);

    private final TestOps ops = new TestOps();

    static Pattern ctor(Constructor c, Pattern... args) {
        return new Pattern.Ctor(c, List.of(args));
    }

    static Pattern bind(Var x) {
        return new Pattern.Bind(x);
    }

    static Match match(Expr data, Clause... clauses) {
        return new Match(data, List.of(clauses));
    }

    /**
     * def @add(%m, %n) { match (%m) { Z => %n, S(%p) => S(@add(%p, %n)) } }
     * def @to_int(%n) { match (%n) { Z => 0, S(%p) => 1 + @to_int(%p) } }
     * def @of_int(%i) { if (%i == 0) { Z } else { S(@of_int(%i - 1)) } }
     */
    static IRModule natModule() {
        Var m = v("m");
        Var n = v("n");
        Var p = v("p");
        Expr addBody = match(m, new Clause(ctor(Z), n),
                new Clause(ctor(S, bind(p)), call(S, call(new GlobalVar("add"), p, n))));
        Var k = v("n");
        Var q = v("p");
        Expr toInt = match(k, new Clause(ctor(Z), i32(0)),
                new Clause(ctor(S, bind(q)), add(i32(1), call(new GlobalVar("to_int"), q))));
        Var i = v("i");
        Expr ofInt = ifte(eq(i, i32(0)), Z, call(S, call(new GlobalVar("of_int"), sub(i, i32(1)))));
        return IRModule.EMPTY
                .withType(new TypeData(NAT, List.of(), List.of(Z, S)))
                .withFunction("add", fn(addBody, m, n))
                .withFunction("to_int", fn(toInt, k))
                .withFunction("of_int", fn(ofInt, i));
    }

    private Interpreter interp(IRModule m) {
        return new Interpreter(m, ops::resolve);
    }

    @Test
    void natAdditionAndConversion() {
        Expr main = call(new GlobalVar("to_int"), call(new GlobalVar("add"),
                call(new GlobalVar("of_int"), i32(3)), call(S, call(S, Z))));
        IRModule m = natModule().withFunction("main", fn(main));
        assertEquals(5, interp(m).call("main").asTensor().getLong(0));
        ConstructorValue two = assertInstanceOf(ConstructorValue.class, interp(m).evaluate(call(S, call(S, Z))));
        assertEquals("S", two.constructor().name());
        ConstructorValue one = assertInstanceOf(ConstructorValue.class, two.fields().get(0));
        assertEquals(Z, ((ConstructorValue) one.fields().get(0)).constructor());
    }

    @Test
    void nullaryConstructorCalledWithParenthesesIsTheSameValue() {
        Value a = Interpreter.eval(new Call(Z, List.of()));
        Value b = Interpreter.eval(Z);
        assertEquals(((ConstructorValue) a).constructor(), ((ConstructorValue) b).constructor());
        assertEquals(List.of(), ((ConstructorValue) a).fields());
    }

    /** Builds Cons(1, Cons(2, Cons(3, Nil))). */
    static Expr list(int... xs) {
        Expr l = NIL;
        for (int i = xs.length - 1; i >= 0; i--) l = call(CONS, i32(xs[i]), l);
        return l;
    }

    /**
     * def @map(%f, %l) { match (%l) { Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil } }
     * def @foldl(%f, %acc, %l) { match (%l) { Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t), Nil => %acc } }
     */
    static IRModule listModule() {
        Var f = v("f");
        Var l = v("l");
        Var h = v("h");
        Var t = v("t");
        Expr map = match(l, new Clause(ctor(CONS, bind(h), bind(t)), call(CONS, call(f, h), call(new GlobalVar("map"), f, t))),
                new Clause(ctor(NIL), NIL));
        Var g = v("f");
        Var acc = v("acc");
        Var l2 = v("l");
        Var h2 = v("h");
        Var t2 = v("t");
        Expr foldl = match(l2, new Clause(ctor(CONS, bind(h2), bind(t2)), call(new GlobalVar("foldl"), g, call(g, acc, h2), t2)),
                new Clause(ctor(NIL), acc));
        return IRModule.EMPTY
                .withType(new TypeData(LIST, List.of(A), List.of(CONS, NIL)))
                .withFunction("map", fn(map, f, l))
                .withFunction("foldl", fn(foldl, g, acc, l2));
    }

    @Test
    void mapWithACapturingClosureThenFoldWithAnOperatorClosure() {
        // let %k = 10; let %scale = fn(%x) { %x * %k }; @foldl(fn(%a, %b) { %a + %b }, 0, @map(%scale, [1, 2, 3])) = 60
        Var k = v("k");
        Var scale = v("scale");
        Var x = v("x");
        Var a = v("a");
        Var b = v("b");
        Expr main = Ir.let(k, i32(10), Ir.let(scale, fn(mul(x, k), x),
                call(new GlobalVar("foldl"), fn(add(a, b), a, b), i32(0), call(new GlobalVar("map"), scale, list(1, 2, 3)))));
        IRModule m = listModule().withFunction("main", fn(main));
        assertEquals(60, interp(m).call("main").asTensor().getLong(0));
    }

    @Test
    void mapWithAGlobalFunctionAsValueAndConstructorAsValue() {
        // @map(@double, [1, 2]) = [2, 4]
        Var y = v("y");
        IRModule m = listModule().withFunction("double", fn(mul(y, i32(2)), y))
                .withFunction("main", fn(call(new GlobalVar("map"), new GlobalVar("double"), list(1, 2))));
        ConstructorValue l = (ConstructorValue) interp(m).call("main");
        assertEquals(CONS, l.constructor());
        assertEquals(2, l.fields().get(0).asTensor().getLong(0));
        ConstructorValue rest = (ConstructorValue) l.fields().get(1);
        assertEquals(4, rest.fields().get(0).asTensor().getLong(0));
        assertEquals(NIL, ((ConstructorValue) rest.fields().get(1)).constructor());

        // A constructor with fields is a function value: @map(S, [Z, Z]) = [S(Z), S(Z)].
        Expr natList = call(CONS, Z, call(CONS, Z, NIL));
        IRModule m2 = listModule().withType(new TypeData(NAT, List.of(), List.of(Z, S)))
                .withFunction("main", fn(call(new GlobalVar("map"), S, natList)));
        ConstructorValue l2 = (ConstructorValue) interp(m2).call("main");
        assertEquals(S, ((ConstructorValue) l2.fields().get(0)).constructor());
    }

    @Test
    void tuplePatternsWildcardsAndFirstMatchingClauseWins() {
        // match ((1, Z)) { (%a, S(_)) => 100, (%a, _) => %a + 1, _ => 0 }
        Var a1 = v("a");
        Var a2 = v("a");
        Expr data = new Tuple(List.of(i32(1), Z));
        Match m = match(data,
                new Clause(new Pattern.TuplePattern(List.of(bind(a1), ctor(S, Pattern.WILDCARD))), i32(100)),
                new Clause(new Pattern.TuplePattern(List.of(bind(a2), Pattern.WILDCARD)), add(a2, i32(1))),
                new Clause(Pattern.WILDCARD, i32(0)));
        assertEquals(2, interp(IRModule.EMPTY).evaluate(m).asTensor().getLong(0));
    }

    @Test
    void partialMatchWorksWhenAClauseMatchesAndFailsNamingTheSpanOtherwise() {
        // match? (%n) { S(%p) => %p }: the predecessor; on Z no clause matches.
        Var n = v("n");
        Var p = v("p");
        Span where = new Span("pred.relay", 3, 5);
        Match partial = new Match(n, List.of(new Clause(ctor(S, bind(p)), p)), false, where);
        IRModule m = natModule().withFunction("pred", fn(partial, n));
        Value pred = interp(m).evaluate(call(new GlobalVar("pred"), call(S, call(S, Z))));
        assertEquals(S, ((ConstructorValue) pred).constructor());
        InterpreterException e = assertThrows(InterpreterException.class, () -> interp(m).evaluate(call(new GlobalVar("pred"), Z)));
        assertEquals(where, e.span());
        assertTrue(e.getMessage().startsWith("pred.relay:3:5: no clause of the match? matches the value Z"), e.getMessage());
    }

    @Test
    void constructorArityIsChecked() {
        InterpreterException e = assertThrows(InterpreterException.class,
                () -> Interpreter.eval(new Call(S, List.of(Z, Z), dev.relayfarm.ir.Attrs.EMPTY, List.of(), new Span("f", 1, 2))));
        assertEquals("f:1:2: constructor S takes 1 arguments, got 2", e.getMessage());
    }

    @Test
    void mainParameterOfAdtTypeIsChecked() {
        Var n = v("n", NAT);
        IRModule m = natModule().withFunction("main", fn(call(new GlobalVar("to_int"), n), n));
        Interpreter in = interp(m);
        assertEquals(2, in.call("main", List.of(in.evaluate(call(S, call(S, Z))))).asTensor().getLong(0));
        InterpreterException e = assertThrows(InterpreterException.class, () -> in.call("main", List.of(Value.tensor(NDArray.scalar(2)))));
        assertEquals("@main parameter %n expects Nat, got int32", e.getMessage());
    }
}
