package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.ir.WellFormed;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.serde.IrJsonException;
import dev.relayfarm.types.TypeInference;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue #13: no input text can overflow the stack. Each kind of syntactic nesting is generated far
 * past {@link ParserOptions#DEFAULT_MAX_DEPTH} (a located {@link RelayParseException}, never a
 * StackOverflowError) and exactly at it, where the whole chain a farm job runs — parse, type
 * inference, interpretation, printing and re-parsing, JSON round trip, well-formedness, structural
 * hash and equality, -O3 — must succeed on a thread with a 512 KiB stack (a default Linux thread
 * has 1 MiB at most; surefire adds no -Xss).
 */
class DeepNestingTest {
    static final int LIMIT = ParserOptions.DEFAULT.maxDepth();
    static final long SMALL_STACK = 512 * 1024;

    /**
     * One construct per kind, {@code levels} parser levels deep, as {@code @main(%x: float32)}
     * returning {@code %x} (plus a constant for some) so the interpreter's answer is checkable. The
     * function body itself is one level; {@code levels} counts it.
     */
    enum Kind {
        PARENS(d -> body("(".repeat(d - 1) + "%x" + " + 1f)".repeat(d - 1)), true),
        CALLS(d -> body("add(".repeat(d - 1) + "%x" + ", 1f)".repeat(d - 1)), true),
        NEGATE(d -> body("- ".repeat(2 * ((d - 1) / 2)) + "%x"), false),
        // (fn (%v1: float32) -> float32 { (fn (%v2 ...) { %v2 })(%v1) })(%x): two levels per fn (parenthesis, body).
        FN(d -> {
            int n = (d - 1) / 2;
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= n; i++) sb.append("(fn (%v").append(i).append(": float32) -> float32 { ");
            sb.append(n == 0 ? "%x" : "%v" + n);
            for (int i = n; i >= 1; i--) sb.append(" })(").append(i == 1 ? "%x" : "%v" + (i - 1)).append(')');
            return body(sb.toString());
        }, false),
        IF(d -> body("if (True) { ".repeat(d - 1) + "%x" + " } else { %x }".repeat(d - 1)), false),
        // ((%x, (%x, ... %x)).1 ... ).1: the tuple type is as deep as the tuple.
        TUPLES(d -> body("(%x, ".repeat(d - 1) + "%x" + ")".repeat(d - 1) + ".1".repeat(d - 1)), false),
        LET_VALUES(d -> {
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i < d; i++) sb.append("let %l").append(i).append(" = ");
            sb.append("%x");
            for (int i = d - 1; i >= 1; i--) sb.append("; %l").append(i);
            return body(sb.toString());
        }, false),
        MATCH(d -> {
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i < d; i++) sb.append("match (").append(i == 1 ? "%x" : "%m" + (i - 1)).append(") { %m").append(i).append(" => ");
            sb.append(d == 1 ? "%x" : "%m" + (d - 1));
            sb.append(" }".repeat(d - 1));
            return body(sb.toString());
        }, false),
        // match ((((%x,),),)) { ((((%p,),),)) => %p }: the tuple and the tuple pattern nest alike.
        PATTERNS(d -> {
            int n = d - 2; // the body and the match scrutinee
            return body("match (" + "(".repeat(n) + "%x" + ",)".repeat(n) + ") { " + "(".repeat(n) + "%p" + ",)".repeat(n) + " => %p }");
        }, false),
        // A parameter of a local function typed ((((float32,),),),): each tuple type one level.
        TYPES(d -> {
            int n = d - 3; // the body, the let value and the fn body
            String ty = "(".repeat(n) + "float32" + ",)".repeat(n);
            return body("let %f = fn (%p: " + ty + ") { %x }; %x");
        }, false);

        final IntFunction<String> text;
        final boolean addsOnes;

        Kind(IntFunction<String> text, boolean addsOnes) {
            this.text = text;
            this.addsOnes = addsOnes;
        }

        static String body(String e) {
            return "#[version = \"0.0.5\"]\ndef @main(%x: float32) -> float32 {\n  " + e + "\n}\n";
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void farTooDeepIsALocatedErrorNotAStackOverflow(Kind kind) throws Throwable {
        String text = kind.text.apply(100_000);
        RelayParseException e = onSmallStack(() -> {
            try {
                RelayParser.parseModule(text, "deep.relay");
                return null;
            } catch (RelayParseException ex) {
                return ex;
            }
        });
        assertNotNull(e, kind + ": 100,000 levels parsed");
        assertEquals("deep.relay", e.file());
        assertEquals(3, e.line(), e.reason());
        assertTrue(e.reason().startsWith("nesting deeper than " + LIMIT + " levels"), e.reason());
        assertTrue(e.reason().contains("(the limit: write deep dataflow as let bindings"), e.reason());
        // The 200 KB line is shown as a window around the column, the caret under the culprit.
        String[] lines = e.getMessage().split("\n");
        assertEquals(3, lines.length, e.getMessage());
        assertTrue(lines[1].length() <= 126, lines[1]);
        assertEquals(lines[1].charAt(lines[2].length() - 1), text.split("\n")[2].charAt(e.column() - 1));
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void oneLevelPastTheLimitIsRejected(Kind kind) {
        String text = kind.text.apply(LIMIT + 2);
        RelayParseException e = org.junit.jupiter.api.Assertions.assertThrows(RelayParseException.class, () -> RelayParser.parseModule(text, "deep.relay"));
        assertTrue(e.reason().startsWith("nesting deeper than"), e.reason());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void atTheLimitEverythingDownstreamRunsOnA512KStack(Kind kind) throws Throwable {
        String text = kind.text.apply(LIMIT);
        // Three rounds: frame sizes change as the JIT compiles the recursive methods (each round
        // calls them hundreds of times), and every state must fit.
        for (int round = 0; round < 3; round++) atTheLimit(kind, text);
    }

    private static void atTheLimit(Kind kind, String text) throws Throwable {
        onSmallStack(() -> {
            IRModule m = RelayParser.parseModule(text, "deep.relay");
            var typed = TypeInference.infer(m);
            double expected = 2.0 + (kind.addsOnes ? LIMIT - 1 : 0);
            assertEquals(expected, run(m), 0f, "interpreted");
            String printed = RelayPrinter.print(m);
            IRModule reparsed = RelayParser.parseModule(printed, "printed.relay");
            assertTrue(StructuralEquality.equal(m, reparsed), "print/parse round trip");
            assertEquals(StructuralHash.hash(m), StructuralHash.hash(reparsed));
            assertTrue(WellFormed.problems(m).isEmpty(), () -> WellFormed.problems(m).toString());
            IRModule fromJson = IrJson.fromJson(IrJson.toJson(typed.module()));
            assertTrue(StructuralEquality.equal(typed.module(), fromJson), "JSON round trip");
            IRModule o3 = OptPipeline.optimize(m, 3);
            assertEquals(expected, run(o3), 0f, "interpreted after -O3");
            RelayPrinter.print(o3);
            return null;
        });
    }

    @org.junit.jupiter.api.Test
    void jsonLimitIsTheParserLimit() {
        assertEquals(ParserOptions.DEFAULT_MAX_DEPTH, IrJson.MAX_NESTING_DEPTH);
    }

    /** 100,000 nested arrays in an attribute: Jackson stops at the limit, reported with its position. */
    @org.junit.jupiter.api.Test
    void deepJsonTextIsALocatedError() throws Throwable {
        String doc = "{\"format\":\"relayfarm.ir\",\"version\":1,\"nodes\":[{\"node\":\"Op\",\"name\":\"add\",\"attrs\":{\"a\":"
                + "[".repeat(100_000) + "]".repeat(100_000) + "}}],\"functions\":[]}";
        IrJsonException e = onSmallStack(() -> org.junit.jupiter.api.Assertions.assertThrows(IrJsonException.class, () -> IrJson.fromJson(doc)));
        assertEquals("$", e.path());
        assertTrue(e.detail().startsWith("JSON nesting deeper than " + IrJson.MAX_JSON_DEPTH + " levels at line 1, column "), e.detail());
    }

    /** A tree from a caller's own ObjectMapper (Jackson's default allows 1000 levels) is checked too. */
    @org.junit.jupiter.api.Test
    void deepJsonTreeIsAnErrorWithItsPath() throws Throwable {
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        var root = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(IrJson.toJson(RelayParser.parseModule("def @main(%x: float32) { %x }")));
        // %x's type becomes a tuple type in a tuple type ... 450 deep: 900 JSON levels.
        var type = (com.fasterxml.jackson.databind.node.ObjectNode) root.get("vars").get(0).get("type");
        for (int i = 0; i < 450; i++) {
            type.removeAll().put("type", "Tuple");
            type = type.putArray("fields").addObject();
        }
        type.put("type", "Tensor").put("dtype", "float32").putArray("shape");
        IrJsonException e = onSmallStack(() -> org.junit.jupiter.api.Assertions.assertThrows(IrJsonException.class, () -> IrJson.read(root, dev.relayfarm.serde.BlobSource.NONE)));
        assertTrue(e.path().startsWith("$.vars[0].type.fields[0].fields[0]"), e.path());
        assertTrue(e.detail().startsWith("JSON nesting deeper than " + IrJson.MAX_JSON_DEPTH), e.detail());
    }

    /**
     * The node table is flat, so JSON can describe 100,000 functions nested in each other without any
     * JSON nesting; the reader counts expression nesting and stops at the parser's limit.
     */
    @org.junit.jupiter.api.Test
    void deeplyNestedFunctionsInTheNodeTableAreRejected() throws Throwable {
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        var root = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(IrJson.toJson(RelayParser.parseModule("def @main(%x: float32) { %x }")));
        var nodes = (com.fasterxml.jackson.databind.node.ArrayNode) root.get("nodes");
        // nodes: [Var x, Function main]; wrap the body in 100,000 parameterless functions.
        nodes.remove(1);
        for (int i = 0; i < 100_000; i++) nodes.addObject().put("node", "Function").put("body", i).putArray("params");
        nodes.addObject().put("node", "Function").put("body", 100_000).putArray("params").add(0);
        ((com.fasterxml.jackson.databind.node.ObjectNode) root.get("functions").get(0)).put("node", 100_001);
        String doc = mapper.writeValueAsString(root);
        IrJsonException e = onSmallStack(() -> org.junit.jupiter.api.Assertions.assertThrows(IrJsonException.class, () -> IrJson.fromJson(doc)));
        assertEquals("$.nodes[" + (IrJson.MAX_NESTING_DEPTH + 1) + "]", e.path());
        assertTrue(e.detail().startsWith("expressions nested deeper than " + IrJson.MAX_NESTING_DEPTH), e.detail());
    }

    static double run(IRModule m) {
        Value v = Interpreter.runMain(m, NDArray.scalar(2f));
        return ((TensorValue) v).data().getDouble(0);
    }

    /** Runs {@code body} on a fresh thread with a 512 KiB stack and returns its result or rethrows. */
    static <T> T onSmallStack(java.util.concurrent.Callable<T> body) throws Throwable {
        AtomicReference<T> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                result.set(body.call());
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "small-stack", SMALL_STACK);
        t.start();
        t.join();
        if (failure.get() instanceof StackOverflowError so) {
            StackTraceElement[] st = so.getStackTrace();
            StringBuilder where = new StringBuilder();
            for (int i = 0; i < Math.min(12, st.length); i++) where.append("\n  at ").append(st[i]);
            fail("StackOverflowError on a 512 KiB stack" + where, so);
        }
        if (failure.get() != null) throw failure.get();
        return result.get();
    }
}
