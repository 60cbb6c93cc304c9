package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.TupleGetItem;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Literal corner cases found by the random round-trip properties (dev.relayfarm.gen). */
class LiteralEdgeRoundTripTest {
    private static void assertRoundTrips(Expr body) {
        IRModule m = IRModule.fromMain(new Function(List.of(), body));
        String text = RelayPrinter.print(m);
        assertEquals(Optional.empty(), StructuralEquality.diff(m, RelayParser.parseModule(text, "t.relay")), text);
    }

    @Test
    void integerAttributesUseTheWholeLongRange() {
        // AttrValue.IntValue holds a long: kernel_size=9223372036854775807 must read back, not fail as int32.
        Attrs attrs = Attrs.of("big", AttrValue.of(Long.MAX_VALUE)).with("small", AttrValue.of(Long.MIN_VALUE))
                .with("list", AttrValue.ints(1L << 40, -(1L << 33)));
        assertRoundTrips(new Call(Op.get("reshape"), List.of(new Constant(NDArray.scalar(1f))), attrs));
    }

    @Test
    void integerAttributeOutOfLongRangeIsAnErrorWithPosition() {
        RelayParseException e = org.junit.jupiter.api.Assertions.assertThrows(RelayParseException.class,
                () -> RelayParser.parseExpr("reshape(1f, n=9223372036854775808)", "t.relay"));
        assertTrue(e.getMessage().startsWith("t.relay:1:"), e.getMessage());
        assertTrue(e.getMessage().contains("out of range for int64"), e.getMessage());
    }

    @Test
    void projectionOfAScalarLiteral() {
        // TupleGetItem(0, 2) must not print as "0.2", which reads back as a float literal.
        assertRoundTrips(new TupleGetItem(new Constant(NDArray.scalar(0)), 2));
        assertRoundTrips(new TupleGetItem(new Constant(NDArray.scalar(-3L)), 0));
    }
}
