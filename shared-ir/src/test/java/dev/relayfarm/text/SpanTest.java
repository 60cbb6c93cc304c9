package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.Tuple;
import org.junit.jupiter.api.Test;

/** Parsed nodes carry the file, line and column where they start. */
class SpanTest {

    @Test
    void nodesPointAtTheirSource() {
        Function main = RelayParser.parseModule("""
                def @main(%x: float32) {
                  let %y = add(%x, 1f);
                  (%y, -%x)
                }
                """, "s.relay").main().orElseThrow();
        assertEquals(new Span("s.relay", 1, 1), main.span());
        assertEquals(new Span("s.relay", 1, 11), main.params().getFirst().span());
        Let let = (Let) main.body();
        assertEquals(new Span("s.relay", 2, 3), let.span());
        assertEquals(new Span("s.relay", 2, 7), let.var().span());
        Call add = (Call) let.value();
        assertEquals(new Span("s.relay", 2, 12), add.span());
        assertEquals(new Span("s.relay", 2, 20), add.args().get(1).span());
        Tuple t = (Tuple) let.body();
        assertEquals(new Span("s.relay", 3, 3), t.span());
        assertEquals(new Span("s.relay", 3, 8), t.fields().get(1).span());
    }

    @Test
    void everyParsedNodeWithASpanFieldHasOne() {
        var m = RelayParser.parseModule(RoundTrip.resource("list_map_fold.relay"), "l.relay");
        for (Function f : m.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) {
                if (e instanceof GlobalVar || e instanceof Op || e instanceof Constructor) continue; // no span field
                assertTrue(e.span().isKnown() && e.span().file().equals("l.relay"), "no span on " + e);
            }
        }
    }
}
