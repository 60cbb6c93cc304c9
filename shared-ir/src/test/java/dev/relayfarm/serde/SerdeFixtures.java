package dev.relayfarm.serde;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeKind;
import dev.relayfarm.ir.TypeRelation;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.LinkedHashMap;
import java.util.List;

/** Modules built with the IR constructors, together covering every node, type, dim and attribute kind. */
final class SerdeFixtures {
    private SerdeFixtures() {}

    static final DType F32 = DType.FLOAT32;

    static TensorType tensor(long... dims) {
        return TensorType.of(F32, dims);
    }

    /** {@code type List[A] { Cons(A, List[A]), Nil }}. */
    static TypeData listAdt() {
        TypeVar a = TypeVar.fresh("A");
        GlobalTypeVar list = new GlobalTypeVar("List");
        Constructor cons = new Constructor("Cons", List.of(a, new TypeCall(list, List.of(a))), list, 0);
        Constructor nil = new Constructor("Nil", List.of(), list, 1);
        return new TypeData(list, List.of(a), List.of(cons, nil));
    }

    /** {@code type Pair[A, B] { MkPair(A, B) }}: two type parameters. */
    static TypeData pairAdt() {
        TypeVar a = TypeVar.fresh("A");
        TypeVar b = TypeVar.fresh("B");
        GlobalTypeVar pair = new GlobalTypeVar("Pair");
        return new TypeData(pair, List.of(a, b), List.of(new Constructor("MkPair", List.of(a, b), pair, 0)));
    }

    static Attrs everyAttrKind() {
        LinkedHashMap<String, AttrValue> m = new LinkedHashMap<>();
        m.put("int", AttrValue.of(-7));
        m.put("big", AttrValue.of(Long.MAX_VALUE));
        m.put("float", AttrValue.of(1e-5));
        m.put("whole_float", AttrValue.of(2.0));
        m.put("neg_zero", AttrValue.of(-0.0));
        m.put("nan", AttrValue.of(Double.NaN));
        m.put("inf", AttrValue.of(Double.POSITIVE_INFINITY));
        m.put("ninf", AttrValue.of(Double.NEGATIVE_INFINITY));
        m.put("str", AttrValue.of("NCHW"));
        m.put("odd key \"quoted\"", AttrValue.of("ünïcödé\n\ttab"));
        m.put("yes", AttrValue.of(true));
        m.put("no", AttrValue.of(false));
        m.put("none", AttrValue.NONE);
        m.put("ints", AttrValue.ints(1, 1));
        m.put("empty", new AttrValue.ListValue(List.of()));
        m.put("nested", new AttrValue.ListValue(List.of(AttrValue.ints(1, 2), new AttrValue.ListValue(List.of(AttrValue.of(0.5), AttrValue.NONE, AttrValue.of("s"))))));
        return new Attrs(m);
    }

    /** One module that uses every node kind, every type kind, every dim kind, every attribute kind, spans. */
    static IRModule everything() {
        TypeData list = listAdt();
        TypeData pair = pairAdt();
        Constructor cons = list.constructors().get(0);
        Constructor nil = list.constructors().get(1);
        Constructor mkPair = pair.constructors().get(0);
        Span sp = new Span("model.relay", 3, 7);

        // @helper[T](%t: T, %l: List[T]) -> List[T] { Cons(%t, %l) }   -- polymorphic, constructor callee
        TypeVar t = TypeVar.fresh("T");
        Var ht = Var.fresh("t", t, new Span("model.relay", 1, 14));
        Var hl = Var.fresh("l", new TypeCall(list.header(), List.of(t)));
        Function helper = new Function(List.of(ht, hl), new Call(cons, List.of(ht, hl)), new TypeCall(list.header(), List.of(t)),
                List.of(t), Attrs.EMPTY, new Span("model.relay", 1, 1));

        // A fused primitive with a shape-variable type parameter and symbolic dims.
        TypeVar n = TypeVar.fresh("n", TypeKind.SHAPE_VAR);
        Var px = Var.fresh("p0", new TensorType(List.of(Dim.sym("n"), Dim.ANY, new Dim.Bin(Dim.BinOp.MUL, Dim.of(2), Dim.sym("n")),
                new Dim.Bin(Dim.BinOp.FLOOR_DIV, new Dim.Bin(Dim.BinOp.ADD, Dim.sym("n"), Dim.of(1)), Dim.of(3))), F32));
        Function prim = new Function(List.of(px), Call.op("nn.relu", px), null, List.of(n),
                Attrs.of(Function.PRIMITIVE, AttrValue.of(1)).with("Composite", AttrValue.of("relu")), Span.NONE);

        Var x = Var.fresh("x", tensor(2, 2), sp);
        Var y = Var.fresh("y"); // unannotated
        Var cell = Var.fresh("cell");
        Var h = Var.fresh("h");
        Var rest = Var.fresh("rest");
        Var a = Var.fresh("a");
        Var b = Var.fresh("b");
        Var fnVar = Var.fresh("f");

        NDArray weights = NDArray.fromDoubles(F32, new int[] {2, 2}, new double[] {1, -2.5, Double.NaN, Float.MAX_VALUE});
        Constant w = new Constant(weights, new Span("model.relay", 4, 2));
        Expr add = new Call(Op.get("add"), List.of(x, w), Attrs.EMPTY, List.of(), new Span("model.relay", 5, 3));
        Expr conv = new Call(Op.get("nn.conv2d"), List.of(add, w), everyAttrKind(), List.of(tensor(2, 2), TensorType.scalar(DType.INT64)), Span.NONE);
        Expr primCall = new Call(prim, List.of(conv));

        // Every pattern kind, and match? (complete=false).
        Expr listValue = new Call(cons, List.of(i32(1), new Call(nil, List.of())));
        Match match = new Match(listValue, List.of(
                new Clause(new Pattern.Ctor(cons, List.of(new Pattern.Bind(h), new Pattern.Ctor(nil, List.of()))), h),
                new Clause(new Pattern.Ctor(cons, List.of(Pattern.WILDCARD, new Pattern.Bind(rest))), i32(2)),
                new Clause(Pattern.WILDCARD, i32(3))), false, new Span("model.relay", 9, 1));
        Match tupleMatch = new Match(new Tuple(List.of(i32(4), i32(5))), List.of(
                new Clause(new Pattern.TuplePattern(List.of(new Pattern.Bind(a), new Pattern.Bind(b))), new Call(Op.get("add"), List.of(a, b)))));

        // Recursive local function: %f is in scope in its own body.
        Var k = Var.fresh("k", TensorType.scalar(DType.INT32));
        Function local = new Function(List.of(k), new If(Call.op("less", k, i32(0)), k, new Call(fnVar, List.of(Call.op("subtract", k, i32(1))))),
                TensorType.scalar(DType.INT32));

        Expr body = new Let(y, primCall,
                new Let(cell, new RefCreate(y),
                        new Let(fnVar, local,
                                new Tuple(List.of(
                                        new TupleGetItem(new Tuple(List.of(y, w)), 1, new Span("model.relay", 8, 8)),
                                        new RefRead(cell),
                                        new RefWrite(cell, y),
                                        new If(bool(true), match, tupleMatch, sp),
                                        new Call(new GlobalVar("helper"), List.of(y, new Call(nil, List.of())), Attrs.EMPTY, List.of(tensor(2, 2)), Span.NONE),
                                        new Call(mkPair, List.of(y, i32(6))),
                                        new Call(fnVar, List.of(i32(10))),
                                        constants())))));

        // The remaining type kinds on annotations: FuncType with relations and type params, RefType,
        // TupleType, IncompleteType (the same hole twice), GlobalTypeVar.
        TypeVar fa = TypeVar.fresh("FA");
        TypeVar fb = TypeVar.fresh("FB", TypeKind.BASE_TYPE);
        FuncType opSig = new FuncType(List.of(fa, fb), List.of(fa, fa), fb,
                List.of(new TypeRelation("Broadcast", List.of(fa, fa, fb), 2, Attrs.of("axis", AttrValue.of(1)))));
        IncompleteType hole = IncompleteType.fresh();
        Var g1 = Var.fresh("g", opSig);
        Var r1 = Var.fresh("r", new RefType(new TupleType(List.of(hole, hole, TupleType.UNIT, list.header()))));
        Function main = new Function(List.of(x, g1, r1), body, null, List.of(), Attrs.of("global_symbol", AttrValue.of("main")),
                new Span("model.relay", 2, 1));

        return IRModule.EMPTY.withType(list).withType(pair)
                .withFunction("helper", helper)
                .withFunction("main", main);
    }

    /** Constants of every dtype family, a scalar, an empty tensor and lanes. */
    static Expr constants() {
        return new Tuple(List.of(
                new Constant(NDArray.scalar(3.5f)),
                new Constant(NDArray.scalar(Math.PI)),
                new Constant(NDArray.scalar(true)),
                new Constant(NDArray.fromLongs(DType.UINT64, new int[] {2}, new long[] {-1L, 42})),
                new Constant(NDArray.fromLongs(DType.INT8, new int[] {3}, new long[] {-128, 0, 127})),
                new Constant(NDArray.fromLongs(DType.UINT16, new int[] {1}, new long[] {65535})),
                new Constant(NDArray.fromDoubles(DType.FLOAT16, new int[] {2}, new double[] {0.5, -65504})),
                new Constant(NDArray.fromDoubles(DType.BFLOAT16, new int[] {2}, new double[] {1.0, Double.NEGATIVE_INFINITY})),
                new Constant(NDArray.zeros(F32, 0, 3)),
                new Constant(NDArray.zeros(DType.INT32.withLanes(4), 2))));
    }

    static Constant i32(int v) {
        return new Constant(NDArray.scalar(v));
    }

    static Constant bool(boolean v) {
        return new Constant(NDArray.scalar(v));
    }

    /** {@code let %x1 = %x0 + 1f; ... let %xN = ...; %xN}: a let chain {@code n} deep, built iteratively. */
    static IRModule letChain(int n) {
        Var x0 = Var.fresh("x0", TensorType.scalar(F32));
        Var[] vars = new Var[n + 1];
        vars[0] = x0;
        for (int i = 1; i <= n; i++) vars[i] = Var.fresh("x" + i);
        Constant one = new Constant(NDArray.scalar(1f));
        Expr body = vars[n];
        for (int i = n; i >= 1; i--) body = new Let(vars[i], Call.op("add", vars[i - 1], one), body);
        return IRModule.fromMain(new Function(List.of(x0), body));
    }

    /** {@code relu(relu(...relu(%x)...))}: a dataflow chain of {@code n} calls. */
    static IRModule callChain(int n) {
        Var x = Var.fresh("x", tensor(4));
        Expr e = x;
        for (int i = 0; i < n; i++) e = Call.op(i % 2 == 0 ? "nn.relu" : "negative", e);
        return IRModule.fromMain(new Function(List.of(x), e));
    }
}
