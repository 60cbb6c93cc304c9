package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Expressions in the style of the "Expressions in Relay" documentation and TVM's test_ir_parser.py:
 * each parses, prints and re-parses structurally equal; a few check the parsed structure.
 */
class ExpressionRoundTripTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "1", "1f", "-1f", "True", "()", "(1,)", "(1, 2f, True)",
        "fn (%x, %y) { add(%x, %y) }",
        "fn (%x: float32, %y: float32) -> float32 { %x + %y }",
        "let %f = fn (%x, %y) { %x * %y }; %f(10, 11)",
        "fn (%x) { %0 = add(%x, %x); multiply(%0, %0) }",
        "fn (%x) { let %y = %x; let %z = %y; (%x, %y, %z) }",
        "fn [A](%x: A) -> A { %x }",
        "fn (%t: (int32, float32)) { %t.1 }",
        "fn (%t: ((int32, float32), bool)) { %t.0.1 }",
        "fn (%b: bool, %x: int32) { if (%b) { %x } else { 0 } }",
        "fn (%x: int32) { if (%x < 0) { -1 } else if (%x == 0) { 0 } else if (%x < 10) { 1 } else { 2 } }",
        "fn (%x: int32) { if (%x < 0) { let %y = %x * 2; %y } else { if (%x > 5) { 1 } else { 2 } } }",
        "let %r = ref(1f); let %w = ref_write(%r, 2f); ref_read(%r)",
        "fn (%x: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32]) { nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]) }",
        "fn (%x) { nn.batch_norm(%x, %x, %x, %x, %x, epsilon=1e-05f, axis=1).0 }",
        "fn (%x) { nn.pad(%x, pad_width=[[0, 0], [1, 1]], pad_mode=\"constant\", pad_value=0f) }",
        "fn (%x) { strided_slice(%x, begin=[0, -1], end=[2, 3], strides=None, axes=None) }",
        "(fn (%x) { %x })(1)",
        "fn (%x, %y) { (%x + %y, %x + %y) }",
        "fn (%x) { -%x + --%x }",
        "fn (%a, %b, %c) { %a * (%b + %c) - %a / %b >= %c == (%a != %b) }",
        "let %x = 1; let %x = %x + 1; %x",
        "let %x = (let %y = 2; %y * %y); %x",
        "fn (%x) { let %f = fn (%n) { if (%n == 0) { %x } else { %f(%n - 1) } }; %f(5) }",
        "fn (%p0: Tensor[(10), float32], Primitive=1, target=\"llvm\") -> Tensor[(10), float32] { exp(%p0) }",
        "fn () { (1i8, 2i16, 3i64, 4u8, 5u16, 6u32, 7u64, 1.5f16, 2.25f64, 1e-05f, 1e+10f, 0.1f, -0f, -42i16) }",
        "fn (%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] { %x }",
        "fn (%f: fn (int32) -> int32, %r: ref(int32)) { %f(ref_read(%r)) }",
        "/* block /* nested */ comment */ fn (%x) { // line comment\n %x }",
    })
    void roundTrips(String source) {
        RoundTrip.expr(source);
    }

    @Test
    void infixFollowsCPrecedence() {
        Call e = (Call) RelayParser.parseExpr("fn (%a, %b, %c) { %a + %b * %c - %c }").children().getFirst();
        assertEquals(Op.get("subtract"), e.callee());
        Call add = (Call) e.args().get(0);
        assertEquals(Op.get("add"), add.callee());
        assertEquals(Op.get("multiply"), ((Call) add.args().get(1)).callee());
        Call cmp = (Call) ((Function) RelayParser.parseExpr("fn (%a, %b) { %a < %b == %b < %a }")).body();
        assertEquals(Op.get("equal"), cmp.callee());
        assertEquals(Op.get("less"), ((Call) cmp.args().get(0)).callee());
    }

    @Test
    void minusBeforeANumberIsALiteral() {
        Function f = (Function) RelayParser.parseExpr("fn (%a) { (-1f, -%a, %a - 1, %a -1) }");
        Tuple t = (Tuple) f.body();
        Constant c = assertInstanceOf(Constant.class, t.fields().get(0));
        assertEquals(-1.0, c.data().getDouble(0));
        assertEquals(DType.FLOAT32, c.data().dtype());
        assertEquals(Op.get("negative"), ((Call) t.fields().get(1)).callee());
        assertEquals(Op.get("subtract"), ((Call) t.fields().get(2)).callee());
        assertEquals(Op.get("subtract"), ((Call) t.fields().get(3)).callee());
    }

    @Test
    void literalDtypesFollowTvm() {
        Tuple t = (Tuple) RelayParser.parseExpr("(1, 1.5, 1f, 2f64, 1.5f16, 3i64, -42i16, 5u8, True, 255u8)");
        String[] dtypes = {"int32", "float32", "float32", "float64", "float16", "int64", "int16", "uint8", "bool", "uint8"};
        double[] values = {1, 1.5, 1, 2, 1.5, 3, -42, 5, 1, 255};
        for (int i = 0; i < dtypes.length; i++) {
            Constant c = (Constant) t.fields().get(i);
            assertEquals(dtypes[i], c.data().dtype().toString(), "field " + i);
            assertEquals(values[i], c.data().getDouble(0), "field " + i);
            assertEquals(0, c.data().rank());
        }
    }

    @Test
    void floatLiteralsPrintExactly() {
        for (float v : new float[] {0.1f, 1e-5f, 3.4028235e38f, 1.4e-45f, -2.5f, 123456.79f}) {
            Constant c = (Constant) RelayParser.parseExpr(RelayPrinter.print(new Constant(dev.relayfarm.ir.NDArray.scalar(v))));
            assertEquals(Float.floatToRawIntBits(v), Float.floatToRawIntBits(c.data().floatData()[0]), "value " + v);
        }
        assertTrue(RelayPrinter.print(new Constant(dev.relayfarm.ir.NDArray.scalar(1e-5f))).contains("1e-05f"));
    }

    @Test
    void elseIfChainsNestInTheElseBranch() {
        Function f = (Function) RelayParser.parseExpr("fn (%x: int32) { if (%x < 0) { 0 } else if (%x < 5) { 1 } else { 2 } }");
        If outer = (If) f.body();
        If inner = assertInstanceOf(If.class, outer.elseBranch());
        assertInstanceOf(Constant.class, inner.elseBranch());
        // Printed as "else if" when the inner condition needs no graph binding of its own.
        Function g = (Function) RelayParser.parseExpr("fn (%a: bool, %b: bool) { if (%a) { 0 } else if (%b) { 1 } else { 2 } }");
        String printed = RelayPrinter.print(g);
        assertTrue(printed.contains("} else if (%b) {"), printed);
        RoundTrip.expr(printed);
    }

    @Test
    void projectionsChain() {
        Function f = (Function) RelayParser.parseExpr("fn (%t: ((int32, float32), bool)) { %t.0.1 }");
        TupleGetItem outer = (TupleGetItem) f.body();
        assertEquals(1, outer.index());
        assertEquals(0, ((TupleGetItem) outer.tuple()).index());
        assertSame(f.params().getFirst(), ((TupleGetItem) outer.tuple()).tuple());
    }

    @Test
    void parenthesisedLetIsAnExpression() {
        Let l = (Let) RelayParser.parseExpr("let %x = (let %y = 2; %y * %y); %x");
        assertInstanceOf(Let.class, l.value());
    }

    @Test
    void matchQuestionMarkIsIncomplete() {
        var m = RelayParser.parseModule("""
                type Box { B(int32) }
                def @main(%b: Box) { match? (%b) { B(%v) => %v } }
                """);
        assertEquals(false, ((Match) m.main().orElseThrow().body()).complete());
    }
}
