package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Bounds;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.ExprPrinter;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.Interval;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Simplifier;
import dev.relayfarm.kernel.expr.Var;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimplifierTest {
    private final Var i = Var.index("i"), j = Var.index("j"), io = Var.index("io"), ii = Var.index("ii");
    private final Map<Var, Interval> ranges = Map.of(i, Interval.range(16), j, Interval.range(8), io, Interval.range(4), ii, Interval.range(4));

    private String s(PrimExpr e) {
        return ExprPrinter.print(Simplifier.simplify(e, ranges));
    }

    @Test
    void undecidedEqualityStaysAnExpression() {
        // unbounded operands: the comparison cannot be decided (it used to unbox a null and throw)
        Var x = new Var("x", 100, DType.INT32), y = new Var("y", 101, DType.INT32);
        assertEquals("(x == y)", s(new dev.relayfarm.kernel.expr.Binary(dev.relayfarm.kernel.expr.BinaryOp.EQ, x, y)));
        assertEquals("(x != y)", s(new dev.relayfarm.kernel.expr.Binary(dev.relayfarm.kernel.expr.BinaryOp.NE, x, y)));
        assertEquals("false", s(new dev.relayfarm.kernel.expr.Binary(dev.relayfarm.kernel.expr.BinaryOp.EQ, i, PrimExpr.of(20))));
    }

    @Test
    void bitwiseOperatorsAndNewMathFunctionsAreLeftToC() {
        Var x = new Var("x", 102, DType.INT32);
        assertEquals("(x & 3)", s(new dev.relayfarm.kernel.expr.Binary(dev.relayfarm.kernel.expr.BinaryOp.BITAND, x, new dev.relayfarm.kernel.expr.IntImm(3, DType.INT32))));
        assertEquals("~5", s(new dev.relayfarm.kernel.expr.Unary(dev.relayfarm.kernel.expr.UnaryOp.BITNOT, new dev.relayfarm.kernel.expr.IntImm(5, DType.INT32))));
        assertEquals("sin(0.5f)", s(new Call(MathFn.SIN, List.of(new FloatImm(0.5, DType.FLOAT32)))));
    }

    @Test
    void foldsConstantsAndIdentities() {
        assertEquals("14", s(PrimExpr.of(3).mul(4).add(2)));
        assertEquals("i", s(i.mul(1).add(0)));
        assertEquals("i", s(i.add(3).sub(3)));
        assertEquals("((i * 4) + j)", s(i.mul(2).mul(2).add(j)));
        assertEquals("0", s(i.mul(0)));
        assertEquals("2.5f", s(new FloatImm(1.5, DType.FLOAT32).add(new FloatImm(1.0, DType.FLOAT32))));
        assertEquals("x", ExprPrinter.print(Simplifier.simplify(new Var("x", 1, DType.FLOAT32).mul(new FloatImm(1, DType.FLOAT32)))));
        assertEquals("1.0f", s(new Call(MathFn.EXP, List.of(new FloatImm(0, DType.FLOAT32)))));
    }

    @Test
    void cancelsLinearTerms() {
        // the tile-relative index of a compute_at stage: (io*4 + ii) - io*4
        assertEquals("ii", s(io.mul(4).add(ii).sub(io.mul(4))));
        assertEquals("(j - i)", s(PrimExpr.of(0).sub(i).add(j)));
    }

    @Test
    void divisionAndModuloOfSplitIndices() {
        PrimExpr fused = io.mul(4).add(ii);
        assertEquals("io", s(fused.div(4)));
        assertEquals("ii", s(fused.mod(4)));
        assertEquals("(i * 2)", s(i.mul(8).div(4)));
        assertEquals("0", s(ii.div(4)));
        assertEquals("((io * 2) + (ii / 2))", s(fused.div(2)));
        // the row-major offset of a fused axis's halves is the fused index (fuse undone)
        PrimExpr f = Var.index("f");
        assertEquals("f", ExprPrinter.print(Simplifier.simplify(f.div(6).mul(6).add(f.mod(6)))));
        assertEquals("((f * 2) + 1)", ExprPrinter.print(Simplifier.simplify(f.div(6).mul(12).add(f.mod(6).mul(2)).add(1))));
        // i - 8 may be negative: truncating division cannot be split
        assertEquals("((i - 8) / 4)", s(i.sub(8).div(4)));
    }

    @Test
    void mixedRadixDigitsSplitAtATermsCoefficient() {
        // a channel shuffle's index: j*32 + i (j < 8, i < 16 < 32) over 128 = 4 * 32 is j / 4; the rest of j's digit
        // and the low part stay a remainder
        assertEquals("(j / 4)", s(j.mul(32).add(i).div(128)));
        assertEquals("(((j % 4) * 32) + i)", s(j.mul(32).add(i).mod(128)));
        // the low part must stay below the coefficient: i < 16 is not below 8, so nothing splits at 8
        assertEquals("(((j * 8) + i) / 32)", s(j.mul(8).add(i).div(32)));
        // a constant's share moves with its digit: (j*16 + 20) / 32 = (j + 1) / 2 (20 = 1*16 + 4)
        assertEquals("((j + 1) / 2)", s(j.mul(16).add(ii).add(20).div(32)));
    }

    @Test
    void decidesComparisonsAndMinMaxFromBounds() {
        assertEquals("true", s(i.lt(PrimExpr.of(16))));
        assertEquals("(i < 15)", s(i.lt(PrimExpr.of(15))));
        assertEquals("false", s(j.ge(PrimExpr.of(8))));
        assertEquals("j", s(j.min(PrimExpr.of(100))));
        assertEquals("a", ExprPrinter.print(Simplifier.simplify(new Select(io.mul(4).add(ii).lt(PrimExpr.of(16)), new Var("a", 2, DType.FLOAT32), new FloatImm(0, DType.FLOAT32)), ranges)));
    }

    @Test
    void boundsOfIndexExpressions() {
        assertEquals(new Interval(0, 15), Bounds.of(io.mul(4).add(ii), ranges));
        assertEquals(new Interval(-7, 15), Bounds.of(i.sub(j), ranges));
        assertEquals(new Interval(0, 3), Bounds.of(i.div(4), ranges));
        assertEquals(new Interval(0, 2), Bounds.of(i.mod(3), ranges));
        assertEquals(Interval.EVERYTHING, Bounds.of(Var.index("free"), ranges));
    }
}
