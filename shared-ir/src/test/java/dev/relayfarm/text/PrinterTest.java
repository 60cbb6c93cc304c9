package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Printing IR built in code (not parsed): names, sharing, constants, type comments. */
class PrinterTest {

    private static void assertRoundTrip(IRModule m) {
        String text = RelayPrinter.print(m);
        IRModule back = RelayParser.parseModule(text, "printed");
        StructuralEquality.diff(m, back).ifPresent(d -> {
            throw new AssertionError(MismatchText.render(d) + "\n" + text);
        });
    }

    @Test
    void distinctVariablesWithTheSameNameGetSuffixes() {
        TensorType f32 = TensorType.scalar(DType.FLOAT32);
        Var x1 = Var.fresh("x", f32);
        Var x2 = Var.fresh("x");
        Var x3 = Var.fresh("x");
        // let %x = %x(param) + 1; let %x = %x * %x(param); (%x, %x, %x) with three distinct vars
        Expr body = new Let(x2, Call.op("add", x1, new Constant(NDArray.scalar(1f))),
                new Let(x3, Call.op("multiply", x2, x1), new Tuple(List.of(x1, x2, x3))));
        IRModule m = IRModule.fromMain(new Function(List.of(x1), body));
        String text = RelayPrinter.print(m);
        assertTrue(text.contains("def @main(%x: float32)"), text);
        assertTrue(text.contains("let %x1 = add(%x, 1f);"), text);
        assertTrue(text.contains("let %x2 = multiply(%x1, %x);"), text);
        assertTrue(text.contains("(%x, %x1, %x2)"), text);
        assertRoundTrip(m);
    }

    @Test
    void oddNameHintsAreSanitised() {
        Var a = Var.fresh("0");
        Var b = Var.fresh("a.b-c");
        Var c = Var.fresh("");
        IRModule m = IRModule.fromMain(new Function(List.of(a, b, c), new Tuple(List.of(a, b, c))));
        String text = RelayPrinter.print(m);
        assertTrue(text.contains("def @main(%v0, %a_b_c, %x)"), text);
        assertRoundTrip(m);
    }

    @Test
    void sharedNodesPrintOnceAndStayShared() {
        Var x = Var.fresh("x");
        Call shared = Call.op("exp", x);
        Call use = Call.op("add", shared, shared);
        IRModule m = IRModule.fromMain(new Function(List.of(x), new Tuple(List.of(use, shared))));
        String text = RelayPrinter.print(m);
        assertEquals(1, text.split("exp\\(", -1).length - 1, text);
        Tuple t = (Tuple) RelayParser.parseModule(text).main().orElseThrow().body();
        Call add = (Call) t.fields().get(0);
        assertSame(add.args().get(0), add.args().get(1));
        assertSame(add.args().get(0), t.fields().get(1));
    }

    @Test
    void nonScalarAndSpecialConstantsGoToMetadata() {
        NDArray mat = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {1, 2, 3, 4, 5, 6});
        NDArray bf = NDArray.fromDoubles(DType.BFLOAT16, new int[0], new double[] {1.5});
        NDArray inf = NDArray.scalar(Float.POSITIVE_INFINITY);
        NDArray boolVec = NDArray.fromLongs(DType.BOOL, new int[] {3}, new long[] {1, 0, 1});
        Constant cm = new Constant(mat);
        Var x = Var.fresh("x");
        Expr body = new Tuple(List.of(Call.op("add", x, cm), cm, new Constant(bf), new Constant(inf), new Constant(boolVec)));
        IRModule m = IRModule.fromMain(new Function(List.of(x), body));
        String text = RelayPrinter.print(m);
        assertTrue(text.contains("add(%x, meta[relay.Constant][0])"), text);
        assertTrue(text.contains("meta[relay.Constant][3]"), text);
        assertTrue(text.contains("#[metadata]"), text);
        assertTrue(text.contains("\"dtype\": \"bfloat16\""), text);
        assertRoundTrip(m);
        Tuple back = (Tuple) RelayParser.parseModule(text).main().orElseThrow().body();
        assertTrue(((Constant) back.fields().get(1)).data().contentEquals(mat));
        assertEquals(Float.POSITIVE_INFINITY, ((Constant) back.fields().get(3)).data().floatData()[0]);
    }

    @Test
    void typeCommentsComeFromTheGivenTable() {
        IRModule m = RelayParser.parseModule("""
                def @main(%x: Tensor[(3), float32]) {
                  %0 = exp(%x);
                  let %y = add(%0, %0);
                  %y
                }
                """);
        Map<Expr, Type> types = new IdentityHashMap<>();
        Type t = TensorType.of(DType.FLOAT32, 3);
        for (Expr e : dev.relayfarm.ir.ExprTraversal.postOrder(m.main().orElseThrow().body())) types.put(e, t);
        String text = RelayPrinter.print(m, RelayPrinter.Options.withTypes(types));
        assertTrue(text.contains("%0 = exp(%x); /* ty=Tensor[(3), float32] */"), text);
        assertTrue(text.contains("let %y = add(%0, %0); /* ty=Tensor[(3), float32] */"), text);
        assertTrue(text.contains("  %y /* ty=Tensor[(3), float32] */"), text);
        assertTrue(StructuralEquality.equal(m, RelayParser.parseModule(text)));
    }

    @Test
    void attributesOfEveryKindRoundTrip() {
        Var x = Var.fresh("x");
        Attrs attrs = Attrs.EMPTY
                .with("i", AttrValue.of(-3))
                .with("f", AttrValue.of(1e-5))
                .with("g", AttrValue.of(2.0))
                .with("s", AttrValue.of("quote\" back\\slash\nnewline"))
                .with("b", AttrValue.of(true))
                .with("n", AttrValue.NONE)
                .with("l", new AttrValue.ListValue(List.of(AttrValue.ints(1, 2), AttrValue.of(0.5), new AttrValue.ListValue(List.of()))));
        IRModule m = IRModule.fromMain(new Function(List.of(x), new Call(dev.relayfarm.ir.Op.get("my.op"), List.of(x), attrs)));
        String text = RelayPrinter.print(m);
        assertTrue(text.contains("my.op(%x, i=-3, f=1e-05f, g=2f, s=\"quote\\\" back\\\\slash\\nnewline\", b=True, n=None, l=[[1, 2], 0.5f, []])"), text);
        Call back = (Call) RelayParser.parseModule(text).main().orElseThrow().body();
        assertEquals(attrs, back.attrs());
    }

    @Test
    void freeVariablesResolveThroughTheGivenEnvironment() {
        Var x = Var.fresh("x");
        Expr e = Call.op("add", x, x);
        String text = RelayPrinter.print(e);
        Expr back = RelayParser.parseExpr(text, "t", null, Map.of("x", x));
        assertSame(x, ((Call) back).args().get(0));
    }

    @Test
    void expressionsMayUseTheConstructorsOfAContextModule() {
        IRModule lists = RelayParser.parseModule(RoundTrip.resource("list_map_fold.relay"));
        Expr e = RelayParser.parseExpr("@map(fn (%x: float32) { %x }, Cons(1f, Nil))", "e", lists, null);
        String text = RelayPrinter.print(e);
        assertTrue(StructuralEquality.equal(e, RelayParser.parseExpr(text, "t", lists, null)), text);
        RelayParseException err = org.junit.jupiter.api.Assertions.assertThrows(RelayParseException.class, () -> RelayParser.parseExpr("Cons(1f, Nil)"));
        assertEquals("<string>:1:1: unknown constructor Cons", err.getMessage().lines().findFirst().orElseThrow());
    }
}
