package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StructuralEqualityTest {
    private static final TensorType F32 = TensorType.of(DType.FLOAT32, 2, 3);

    /** fn (%x: Tensor[(2, 3), float32]) { let %y = add(%x, 1f); multiply(%y, %y) } with fresh variables. */
    private static Function sample(String xName, String yName, float c) {
        Var x = Var.fresh(xName, F32);
        Var y = Var.fresh(yName);
        Expr body = new Let(y, Call.op("add", x, new Constant(NDArray.scalar(c))), Call.op("multiply", y, y));
        return new Function(List.of(x), body);
    }

    @Test
    void alphaRenamedProgramsAreEqualAndHashAlike() {
        Function a = sample("x", "y", 1f);
        Function b = sample("p", "q", 1f);
        assertTrue(StructuralEquality.equal(a, b));
        assertEquals(StructuralHash.hash(a), StructuralHash.hash(b));
    }

    @Test
    void differentConstantIsReportedWithPath() {
        Optional<StructuralEquality.Mismatch> m = StructuralEquality.diff(sample("x", "y", 1f), sample("x", "y", 2f));
        assertTrue(m.isPresent());
        assertEquals("expr.body.let(%y).value.args[1]", m.get().path());
        assertTrue(m.get().reason().contains("constant"), m.get().reason());
    }

    @Test
    void variablesMustReferToCorrespondingBinders() {
        // let %a = 1f; let %b = 2f; %a   vs   let %a = 1f; let %b = 2f; %b
        Var a1 = Var.fresh("a"), b1 = Var.fresh("b"), a2 = Var.fresh("a"), b2 = Var.fresh("b");
        Constant one = new Constant(NDArray.scalar(1f)), two = new Constant(NDArray.scalar(2f));
        Expr lhs = new Let(a1, one, new Let(b1, two, a1));
        Expr rhs = new Let(a2, one, new Let(b2, two, b2));
        Optional<StructuralEquality.Mismatch> m = StructuralEquality.diff(lhs, rhs);
        assertTrue(m.isPresent());
        assertTrue(m.get().reason().contains("different variables"), m.get().reason());
    }

    @Test
    void shadowingIsDistinguishedFromReuse() {
        // let %x = 1f; let %x' = %x; %x'  (inner shadow) vs  let %x = 1f; let %x' = %x; %x
        Var x = Var.fresh("x"), xs = Var.fresh("x");
        Var y = Var.fresh("x"), ys = Var.fresh("x");
        Constant one = new Constant(NDArray.scalar(1f));
        assertFalse(StructuralEquality.equal(new Let(x, one, new Let(xs, x, xs)), new Let(y, one, new Let(ys, y, y))));
    }

    @Test
    void typeParametersAreComparedModuloRenaming() {
        TypeVar a = TypeVar.fresh("A"), b = TypeVar.fresh("B");
        Var xa = Var.fresh("x", a), xb = Var.fresh("x", b);
        Function fa = new Function(List.of(xa), xa, a, List.of(a), Attrs.EMPTY, Span.NONE);
        Function fb = new Function(List.of(xb), xb, b, List.of(b), Attrs.EMPTY, Span.NONE);
        assertTrue(StructuralEquality.equal(fa, fb));
        TypeVar c = TypeVar.fresh("A");
        Var xc = Var.fresh("x", c);
        Function fc = new Function(List.of(xc), xc, a, List.of(c), Attrs.EMPTY, Span.NONE); // returns outer A
        assertFalse(StructuralEquality.equal(fa, fc));
    }

    @Test
    void attrsAndOperatorsMatter() {
        Var x = Var.fresh("x");
        Expr c1 = new Call(Op.get("nn.softmax"), List.of(x), Attrs.of("axis", AttrValue.of(1)));
        Expr c2 = new Call(Op.get("nn.softmax"), List.of(x), Attrs.of("axis", AttrValue.of(-1)));
        Expr c3 = new Call(Op.get("nn.log_softmax"), List.of(x), Attrs.of("axis", AttrValue.of(1)));
        assertTrue(StructuralEquality.diff(c1, c2).orElseThrow().path().endsWith("attrs"));
        assertTrue(StructuralEquality.diff(c1, c3).orElseThrow().reason().contains("operators"));
    }

    @Test
    void modulesCompareFunctionsAndTypeDefinitions() {
        GlobalTypeVar list = new GlobalTypeVar("List");
        TypeVar a = TypeVar.fresh("A");
        Constructor cons = new Constructor("Cons", List.of(a, new TypeCall(list, List.of(a))), list, 0);
        Constructor nil = new Constructor("Nil", List.of(), list, 1);
        IRModule m1 = IRModule.EMPTY.withType(new TypeData(list, List.of(a), List.of(cons, nil)))
                .withFunction("main", sample("x", "y", 1f));
        TypeVar b = TypeVar.fresh("B");
        Constructor cons2 = new Constructor("Cons", List.of(b, new TypeCall(list, List.of(b))), list, 0);
        IRModule m2 = IRModule.EMPTY.withType(new TypeData(list, List.of(b), List.of(cons2, nil)))
                .withFunction("main", sample("u", "v", 1f));
        assertTrue(StructuralEquality.equal(m1, m2));
        assertEquals(StructuralHash.hash(m1), StructuralHash.hash(m2));
        IRModule m3 = m2.withFunction("other", sample("u", "v", 1f));
        assertTrue(StructuralEquality.diff(m1, m3).orElseThrow().reason().contains("global functions"));
    }

    @Test
    void sharedDagAndTreeWithSameStructureAreEqual() {
        Var x = Var.fresh("x");
        Expr shared = Call.op("exp", x);
        Expr dag = Call.op("add", shared, shared);
        Var y = Var.fresh("x");
        Expr tree = Call.op("add", Call.op("exp", y), Call.op("exp", y));
        assertTrue(StructuralEquality.equal(new Function(List.of(x), dag), new Function(List.of(y), tree)));
    }

    @Test
    void hundredThousandDeepLetChainComparesAndHashesWithoutStackOverflow() {
        Expr a = letChain(100_000), b = letChain(100_000);
        assertTrue(StructuralEquality.equal(a, b));
        assertEquals(StructuralHash.hash(a), StructuralHash.hash(b));
        assertEquals(200_001, ExprTraversal.countNodes(a)); // lets + constants + the final var
    }

    static Expr letChain(int n) {
        Var[] vars = new Var[n];
        for (int i = 0; i < n; i++) vars[i] = Var.fresh("v" + i);
        Expr body = vars[n - 1];
        for (int i = n - 1; i >= 0; i--) body = new Let(vars[i], new Constant(NDArray.scalar((float) i)), body);
        return body;
    }

    @Test
    void hundredThousandNodeDataflowChainComparesWithoutStackOverflow() {
        Var x = Var.fresh("x"), y = Var.fresh("x");
        Expr a = x, b = y;
        Constant one = new Constant(NDArray.scalar(1f));
        for (int i = 0; i < 100_000; i++) {
            a = Call.op("add", a, one);
            b = Call.op("add", b, one);
        }
        assertTrue(StructuralEquality.equal(new Function(List.of(x), a), new Function(List.of(y), b)));
        Expr c = Call.op("subtract", ((Call) b).args().get(0), one);
        assertFalse(StructuralEquality.equal(new Function(List.of(x), a), new Function(List.of(y), c)));
    }
}
