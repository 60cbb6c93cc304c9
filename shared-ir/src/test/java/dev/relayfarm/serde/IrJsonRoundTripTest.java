package dev.relayfarm.serde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class IrJsonRoundTripTest {

    static IRModule roundTrip(IRModule m) {
        String json = IrJson.toJson(m);
        IRModule back = IrJson.fromJson(json);
        Optional<StructuralEquality.Mismatch> d = StructuralEquality.diff(m, back);
        if (d.isPresent()) fail("round trip changed the module: " + d.get().message() + "\njson: " + json);
        return back;
    }

    /** The document with every "id" field removed: ids are the writer's and are fresh after a read. */
    static JsonNode withoutIds(JsonNode n) {
        JsonNode copy = n.deepCopy();
        strip(copy);
        return copy;
    }

    private static void strip(JsonNode n) {
        if (n instanceof ObjectNode o) o.remove("id");
        for (JsonNode c : n) strip(c);
    }

    @Test
    void everyKindRoundTripsStructurally() {
        roundTrip(SerdeFixtures.everything());
    }

    @Test
    void rewritingTheReadModuleGivesTheSameDocument() {
        // Stronger than structural equality: spans, attribute order, var names, dtypes, everything
        // the document says survives, except the ids readers allocate afresh.
        IRModule m = SerdeFixtures.everything();
        JsonNode first = IrJson.writeTree(m, BlobSink.NONE, IrJson.Options.INLINE_ALL);
        JsonNode second = IrJson.writeTree(IrJson.read(first, BlobSource.NONE), BlobSink.NONE, IrJson.Options.INLINE_ALL);
        assertEquals(withoutIds(first), withoutIds(second));
    }

    @Test
    void documentStartsWithFormatAndVersion() {
        String json = IrJson.toJson(SerdeFixtures.everything());
        assertTrue(json.startsWith("{\"format\":\"relayfarm.ir\",\"version\":1,"), json.substring(0, 60));
    }

    @Test
    void stringTreeAndStreamFormsAgree() {
        IRModule m = SerdeFixtures.everything();
        IrJson.Options opts = IrJson.Options.INLINE_ALL.withPretty(true);
        String s = IrJson.write(m, BlobSink.NONE, opts);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        IrJson.write(m, BlobSink.NONE, opts, out);
        JsonNode tree = IrJson.writeTree(m, BlobSink.NONE, opts);
        assertTrue(s.contains("\n  \"nodes\""), "pretty output is indented");
        assertEquals(withoutIds(IrJson.parse(s)), withoutIds(IrJson.parse(out.toString(java.nio.charset.StandardCharsets.UTF_8))));
        assertEquals(withoutIds(IrJson.parse(s)), withoutIds(tree));
        IRModule viaStream = IrJson.read(new ByteArrayInputStream(out.toByteArray()), BlobSource.NONE);
        assertTrue(StructuralEquality.equal(m, viaStream));
    }

    @Test
    void spansSurviveAndCanBeLeftOut() {
        IRModule m = SerdeFixtures.everything();
        Function main = roundTrip(m).main().orElseThrow();
        assertEquals(new Span("model.relay", 2, 1), main.span());
        assertEquals(new Span("model.relay", 3, 7), main.params().get(0).span());

        String noSpans = IrJson.write(m, BlobSink.NONE, IrJson.Options.INLINE_ALL.withSpans(false));
        assertFalse(noSpans.contains("model.relay"), "no file names without spans");
        Function main2 = IrJson.fromJson(noSpans).main().orElseThrow();
        assertEquals(Span.NONE, main2.span());
        assertTrue(StructuralEquality.equal(m, IrJson.fromJson(noSpans)), "spans do not affect structure");
    }

    @Test
    void attributesKeepOrderKindAndSpecialFloats() {
        Attrs attrs = SerdeFixtures.everyAttrKind();
        Var x = Var.fresh("x");
        IRModule m = IRModule.fromMain(new Function(List.of(x), new Call(Op.get("f"), List.of(x), attrs)));
        Call back = (Call) roundTrip(m).main().orElseThrow().body();
        assertEquals(attrs, back.attrs()); // record equality: FloatValue compares bits, so NaN and -0.0 count
        assertEquals(List.copyOf(attrs.values().keySet()), List.copyOf(back.attrs().values().keySet()));
        assertEquals(AttrValue.of(2.0), back.attrs().get("whole_float").orElseThrow(), "2.0 stays a float, not the int 2");
        assertEquals(AttrValue.of(Long.MAX_VALUE), back.attrs().get("big").orElseThrow());
        assertEquals(Double.doubleToRawLongBits(-0.0),
                Double.doubleToRawLongBits(((AttrValue.FloatValue) back.attrs().get("neg_zero").orElseThrow()).value()));
    }

    @Test
    void constantsKeepDtypeShapeAndBits() {
        Tuple t = (Tuple) SerdeFixtures.constants();
        IRModule m = IRModule.fromMain(new Function(List.of(), t));
        Tuple back = (Tuple) roundTrip(m).main().orElseThrow().body();
        for (int i = 0; i < t.fields().size(); i++) {
            NDArray a = ((Constant) t.fields().get(i)).data();
            NDArray b = ((Constant) back.fields().get(i)).data();
            assertTrue(a.contentEquals(b), "constant " + i + ": " + a + " vs " + b);
            assertEquals(a.sha256(), b.sha256());
        }
    }

    @Test
    void sharedNodesStayShared() {
        Var x = Var.fresh("x");
        Expr shared = Call.op("exp", x);
        Constant c = new Constant(NDArray.scalar(1f));
        Function f = new Function(List.of(x), new Tuple(List.of(shared, shared, Call.op("add", shared, c))));
        Function g = new Function(List.of(), c); // a constant shared across functions
        IRModule m = IRModule.fromMain(f).withFunction("g", g);
        IRModule back = roundTrip(m);
        Tuple t = (Tuple) back.main().orElseThrow().body();
        assertSame(t.fields().get(0), t.fields().get(1));
        assertSame(t.fields().get(0), ((Call) t.fields().get(2)).args().get(0));
        assertSame(((Call) t.fields().get(2)).args().get(1), back.function("g").orElseThrow().body());
        // x, exp-op, exp, add-op, c, add, tuple, f, g: each once.
        JsonNode doc = IrJson.parse(IrJson.toJson(m));
        assertEquals(9, doc.get("nodes").size(), doc.get("nodes").toString());
        assertEquals(ExprTraversal.countNodes(m), ExprTraversal.countNodes(back));
    }

    @Test
    void equalOperatorsShareOneEntry() {
        Var x = Var.fresh("x");
        Expr e = x;
        for (int i = 0; i < 10; i++) e = Call.op("nn.relu", e); // ten distinct Op objects, all "nn.relu"
        JsonNode doc = IrJson.parse(IrJson.toJson(IRModule.fromMain(new Function(List.of(x), e))));
        int ops = 0;
        for (JsonNode n : doc.get("nodes")) if (n.get("node").asText().equals("Op")) ops++;
        assertEquals(1, ops);
    }

    @Test
    void shadowedVariablesStayDistinct() {
        // let %x = 1; let %x = %x + %x; (%x, fn (%x) { %x })  -- three different variables named x
        Var x1 = Var.fresh("x");
        Var x2 = Var.fresh("x");
        Var x3 = Var.fresh("x");
        Constant one = SerdeFixtures.i32(1);
        Expr body = new Let(x1, one, new Let(x2, Call.op("add", x1, x1), new Tuple(List.of(x2, new Function(List.of(x3), x3)))));
        IRModule m = IRModule.fromMain(new Function(List.of(), body));
        Let l1 = (Let) roundTrip(m).main().orElseThrow().body();
        Let l2 = (Let) l1.body();
        Tuple t = (Tuple) l2.body();
        Function inner = (Function) t.fields().get(1);
        assertNotSame(l1.var(), l2.var());
        assertSame(l1.var(), ((Call) l2.value()).args().get(0));
        assertSame(l2.var(), t.fields().get(0));
        assertSame(inner.params().get(0), inner.body());
        assertNotSame(inner.params().get(0), l2.var());
        assertEquals("x", inner.params().get(0).name());

        // Sanity: the comparison used above would notice a wrong binding.
        Expr wrong = new Let(x1, one, new Let(x2, Call.op("add", x1, x1), new Tuple(List.of(x1, new Function(List.of(x3), x3)))));
        assertFalse(StructuralEquality.equal(body, wrong));
    }

    @Test
    void freeVariablesKeepIdentity() {
        Var free = Var.fresh("free", SerdeFixtures.tensor(3));
        Var p = Var.fresh("p");
        IRModule m = IRModule.fromMain(new Function(List.of(p), new Tuple(List.of(free, free, p))));
        Tuple t = (Tuple) roundTrip(m).main().orElseThrow().body();
        assertSame(t.fields().get(0), t.fields().get(1));
        assertNotSame(t.fields().get(0), t.fields().get(2));
    }

    @Test
    void readVariablesGetFreshIds() {
        Var x = Var.fresh("x");
        IRModule m = IRModule.fromMain(new Function(List.of(x), x));
        Var back = roundTrip(m).main().orElseThrow().params().get(0);
        assertNotSame(x, back);
        assertTrue(back.id() != x.id(), "a read var must not reuse the writer's id, or it could collide with a fresh var");
    }

    @Test
    void polymorphicFunctionKeepsOneTypeVariableObject() {
        // def @id[A](%x: A) -> A { %x }  and  def @id2[A](%y: A) -> A { %y }: two different A's.
        TypeVar a1 = TypeVar.fresh("A");
        TypeVar a2 = TypeVar.fresh("A");
        Var x = Var.fresh("x", a1);
        Var y = Var.fresh("y", a2);
        IRModule m = IRModule.EMPTY
                .withFunction("id", new Function(List.of(x), x, a1, List.of(a1), Attrs.EMPTY, Span.NONE))
                .withFunction("id2", new Function(List.of(y), y, a2, List.of(a2), Attrs.EMPTY, Span.NONE));
        IRModule back = roundTrip(m);
        Function id = back.function("id").orElseThrow();
        Function id2 = back.function("id2").orElseThrow();
        TypeVar p = id.typeParams().get(0);
        assertSame(p, id.params().get(0).annotation());
        assertSame(p, id.retType());
        assertEquals("A", p.name());
        assertNotSame(p, id2.typeParams().get(0));
        assertFalse(p.equals(id2.typeParams().get(0)), "the two A's must stay different variables");
        assertSame(id2.typeParams().get(0), id2.retType());
    }

    @Test
    void funcTypeParamsAndRelationsKeepTheirTypeVariables() {
        IRModule back = roundTrip(SerdeFixtures.everything());
        Var g = back.main().orElseThrow().params().get(1);
        FuncType ft = (FuncType) g.annotation();
        assertSame(ft.typeParams().get(0), ft.argTypes().get(0));
        assertSame(ft.typeParams().get(0), ft.constraints().get(0).args().get(0));
        assertSame(ft.typeParams().get(1), ft.retType());
        assertEquals("Broadcast", ft.constraints().get(0).name());
        assertEquals(2, ft.constraints().get(0).numInputs());
        assertEquals(Attrs.of("axis", AttrValue.of(1)), ft.constraints().get(0).attrs());
    }

    @Test
    void incompleteTypesKeepTheirIdentityRelation() {
        IRModule back = roundTrip(SerdeFixtures.everything());
        Var r = back.main().orElseThrow().params().get(2);
        TupleType tt = (TupleType) ((RefType) r.annotation()).value();
        assertSame(tt.fields().get(0), tt.fields().get(1));
        assertTrue(tt.fields().get(0) instanceof IncompleteType);
    }

    @Test
    void adtsRoundTripWithTypeParamsAndConstructorIdentity() {
        IRModule m = SerdeFixtures.everything();
        IRModule back = roundTrip(m);
        TypeData list = back.typeData("List").orElseThrow();
        assertEquals(List.of("List", "Pair"), back.types().keySet().stream().map(k -> k.name()).toList());
        assertEquals(List.of("Cons", "Nil"), list.constructors().stream().map(c -> c.name()).toList());
        assertEquals(1, list.constructors().get(1).tag());
        TypeVar a = list.typeParams().get(0);
        assertSame(a, list.constructors().get(0).inputs().get(0));
        assertSame(a, ((TypeCall) list.constructors().get(0).inputs().get(1)).args().get(0));
        // Constructors used in the program are the very objects of the definition.
        Call consCall = (Call) back.function("helper").orElseThrow().body();
        assertSame(list.constructors().get(0), consCall.callee());
        assertEquals(2, back.typeData("Pair").orElseThrow().typeParams().size());
    }

    @Test
    void emptyModuleRoundTrips() {
        IRModule back = roundTrip(IRModule.EMPTY);
        assertTrue(back.functions().isEmpty());
        assertTrue(back.types().isEmpty());
    }

    @Test
    void moduleWithoutTheAdtOfAUsedConstructorIsRejectedOnWrite() {
        TypeData list = SerdeFixtures.listAdt();
        IRModule m = IRModule.fromMain(new Function(List.of(), new Call(list.constructors().get(1), List.of())));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> IrJson.toJson(m));
        assertTrue(e.getMessage().contains("constructor Nil") && e.getMessage().contains("List"), e.getMessage());
    }

    @Test
    void globalFunctionOrderIsKept() {
        IRModule m = IRModule.EMPTY.withFunction("z", new Function(List.of(), SerdeFixtures.i32(1)))
                .withFunction("a", new Function(List.of(), SerdeFixtures.i32(2)))
                .withFunction("m", new Function(List.of(), SerdeFixtures.i32(3)));
        IRModule back = roundTrip(m);
        Iterator<String> names = back.functions().keySet().stream().map(g -> g.name()).iterator();
        assertEquals("z", names.next());
        assertEquals("a", names.next());
        assertEquals("m", names.next());
    }

    @Test
    void functionTableEntriesPointAtFunctionNodes() {
        JsonNode doc = IrJson.parse(IrJson.toJson(SerdeFixtures.everything()));
        ArrayNode nodes = (ArrayNode) doc.get("nodes");
        for (JsonNode f : doc.get("functions")) {
            assertEquals("Function", nodes.get(f.get("node").asInt()).get("node").asText());
        }
    }
}
