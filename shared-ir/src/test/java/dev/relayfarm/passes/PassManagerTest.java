package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Var;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PassManagerTest {
    private static final String TWO = """
            def @unused(%a: Tensor[(2), float32]) { negative(%a) }
            def @f(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%x) }
            def @main(%y: Tensor[(2), float32]) { @f(%y) }
            """;

    @Test
    void removeUnusedFunctionsKeepsWhatMainReaches() {
        assertRewrites("remove-unused-functions", TWO, """
                def @f(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%x) }
                def @main(%y: Tensor[(2), float32]) { @f(%y) }
                """);
        assertSameResults("remove-unused-functions", TWO);
        assertUnchanged("remove-unused-functions", """
                def @f(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%x) }
                def @main(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { @f(%y) }
                """);
    }

    /** A pass for these tests: replaces exp by negative in every global. */
    private static final class ExpToNeg extends FunctionPass {
        ExpToNeg(int level) {
            super(new PassInfo("exp-to-neg", level, "test"));
        }

        @Override
        protected Function transform(GlobalVar g, Function f, IRModule m, PassContext c) {
            return f.body() instanceof Call call && call.callee() instanceof Op op && op.name().equals("exp")
                    ? f.withBody(new Call(Op.get("negative"), call.args())) : f;
        }
    }

    /** A broken pass: changes the module and says it did not. */
    private static final class Liar implements Pass {
        @Override
        public PassInfo info() {
            return new PassInfo("liar", 0, "test");
        }

        @Override
        public PassResult run(IRModule module, PassContext context) {
            return new PassResult(module.withoutFunction(new GlobalVar("unused")), false);
        }
    }

    /** A broken pass: makes @main ill-typed. */
    private static final class IllTyped extends FunctionPass {
        IllTyped() {
            super(new PassInfo("ill-typed", 0, "test"));
        }

        @Override
        protected Function transform(GlobalVar g, Function f, IRModule m, PassContext c) {
            return g.name().equals("main") ? f.withBody(Call.op("add", f.body(), new dev.relayfarm.ir.Constant(
                    dev.relayfarm.ir.NDArray.zeros(dev.relayfarm.ir.DType.FLOAT32, 3)))) : f;
        }
    }

    private static IRModule typed(String text) {
        return TypeInference.infer(RelayParser.parseModule(text)).module();
    }

    @Test
    void optLevelDisableAndForceDecideWhatRuns() {
        IRModule m = typed(TWO);
        Sequential seq = new Sequential("s", List.of(new ExpToNeg(2)));
        assertFalse(seq.run(m, new PassContext(PassOptions.level(1))).changed());
        assertTrue(seq.run(m, new PassContext(PassOptions.level(2))).changed());
        assertFalse(seq.run(m, new PassContext(PassOptions.level(3).withDisabled(Set.of("exp-to-neg")))).changed());
        assertTrue(seq.run(m, new PassContext(PassOptions.level(0).withForced(Set.of("exp-to-neg")))).changed());
    }

    @Test
    void recordsTimingAndNodeCountsAndDumps() {
        IRModule m = typed(TWO);
        List<String> dumps = new ArrayList<>();
        PassContext ctx = new PassContext(PassOptions.level(3).withDumps(Set.of(), Set.of("remove-unused-functions")), dumps::add);
        PassResult r = new Sequential("s", List.of(new ExpToNeg(1), PassRegistry.get("remove-unused-functions"))).run(m, ctx);
        assertTrue(r.changed());
        assertEquals(List.of("exp-to-neg", "remove-unused-functions"), ctx.records().stream().map(PassRecord::name).toList());
        PassRecord rm = ctx.records().get(1);
        assertTrue(rm.nodesAfter() < rm.nodesBefore(), rm.toString());
        assertEquals(1, dumps.size());
        assertTrue(dumps.get(0).startsWith("// after remove-unused-functions"), dumps.get(0));
        assertTrue(dumps.get(0).contains("negative(%x)") && !dumps.get(0).contains("@unused"), dumps.get(0));
    }

    @Test
    void brokenPassesAreNamed() {
        IRModule m = typed(TWO);
        PassException lie = assertThrows(PassException.class, () -> new Sequential("s", List.of(new Liar()))
                .run(m, new PassContext(PassOptions.level(3).withValidate(true))));
        assertTrue(lie.getMessage().contains("pass liar answered changed=false"), lie.getMessage());
        PassException ill = assertThrows(PassException.class,
                () -> new Sequential("s", List.of(new IllTyped())).run(m, new PassContext(PassOptions.level(3))));
        assertTrue(ill.getMessage().startsWith("pass ill-typed produced an ill-typed module"), ill.getMessage());
        PassException unknown = assertThrows(PassException.class, () -> PassRegistry.get("no-such-pass"));
        assertTrue(unknown.getMessage().contains("remove-unused-functions"), unknown.getMessage());
    }

    @Test
    void unchangedFunctionsAreNotRetyped() {
        IRModule m = typed(TWO);
        PassContext ctx = new PassContext(PassOptions.level(3));
        var before = ctx.typesOf(m);
        var body = m.lookup(new GlobalVar("unused")).body();
        var after = ctx.typesOf(new ExpToNeg(0).run(m, ctx).module());
        assertNotSame(before, after);
        // @unused's nodes keep their table entries (carried over, not re-checked).
        assertSame(before.typeOf(body), after.typeOf(body));
    }
}
