package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Every program under {@code src/test/resources/relay/} parses, prints and re-parses structurally equal. */
class RelayRoundTripTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "mlp.relay", "shadowing.relay", "closure.relay", "factorial.relay", "ackermann.relay", "nat.relay",
        "list_map_fold.relay", "match_partial.relay", "refs.relay", "tuples.relay", "conv2d.relay",
        "meta_constants.relay", "literals.relay", "types.relay", "dataflow_shared.relay", "infix.relay",
        "mutual_recursion.relay", "tree_sum.relay"})
    void resourceProgramsRoundTrip(String name) {
        IRModule m = RoundTrip.module(RoundTrip.resource(name), name);
        assertTrue(m.main().isPresent(), name + " has @main");
    }

    @Test
    void shadowingBindsTheOuterVariableInTheValue() {
        IRModule m = RoundTrip.module(RoundTrip.resource("shadowing.relay"), "shadowing.relay");
        Let outer = (Let) m.main().orElseThrow().body();
        Let inner = (Let) outer.body();
        Call plus = (Call) inner.value();
        assertSame(outer.var(), plus.args().get(0), "value of the second let uses the first %x");
        Let third = (Let) inner.body();
        assertSame(inner.var(), ((Call) third.value()).args().get(0), "later uses see the second %x");
        assertFalse(outer.var() == inner.var());
        String printed = RelayPrinter.print(m);
        assertTrue(printed.contains("let %x = 1;") && printed.contains("let %x1 = add(%x, 1);"), printed);
    }

    @Test
    void graphBindingsShareOneNode() {
        IRModule m = RoundTrip.module(RoundTrip.resource("dataflow_shared.relay"), "dataflow_shared.relay");
        Function main = m.main().orElseThrow();
        dev.relayfarm.ir.Tuple result = (dev.relayfarm.ir.Tuple) main.body();
        Call neg = (Call) result.fields().get(1);
        assertEquals(Op.get("negative"), neg.callee());
        Call sub = (Call) neg.args().get(0);
        Call mul = (Call) sub.args().get(0);
        Call f0 = (Call) result.fields().get(0);
        dev.relayfarm.ir.TupleGetItem proj = (dev.relayfarm.ir.TupleGetItem) f0.args().get(0);
        dev.relayfarm.ir.Tuple triple = (dev.relayfarm.ir.Tuple) proj.tuple();
        assertSame(mul, triple.fields().get(0));
        assertSame(mul, triple.fields().get(2));
        assertInstanceOf(Var.class, mul.args().get(0) instanceof Call c ? c.args().get(0) : null);
    }

    @Test
    void recursiveLetSeesItself() {
        IRModule m = RoundTrip.module(RoundTrip.resource("factorial.relay"), "factorial.relay");
        Let let = (Let) m.main().orElseThrow().body();
        Function fact = (Function) let.value();
        Expr elseBranch = ((dev.relayfarm.ir.If) fact.body()).elseBranch();
        Call times = (Call) elseBranch;
        Call rec = (Call) times.args().get(1);
        assertSame(let.var(), rec.callee());
    }
}
