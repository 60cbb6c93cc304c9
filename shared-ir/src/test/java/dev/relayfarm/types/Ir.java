package dev.relayfarm.types;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeData;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ir.Var;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** Small builders for IR in tests (until programs can be written as Relay text). */
final class Ir {
    private Ir() {}

    static final TensorType F32 = TensorType.scalar(DType.FLOAT32);
    static final TensorType I32 = TensorType.scalar(DType.INT32);
    static final TensorType BOOL = TensorType.scalar(DType.BOOL);

    static TensorType f32(long... dims) {
        return TensorType.of(DType.FLOAT32, dims);
    }

    static Constant cf(float v) {
        return new Constant(NDArray.scalar(v));
    }

    static Constant ci(int v) {
        return new Constant(NDArray.scalar(v));
    }

    static Constant cb(boolean v) {
        return new Constant(NDArray.scalar(v));
    }

    static Var v(String name) {
        return Var.fresh(name);
    }

    static Var v(String name, Type t) {
        return Var.fresh(name, t);
    }

    static Function fn(List<Var> params, Expr body) {
        return new Function(params, body);
    }

    static Function fn(List<Var> params, Expr body, Type ret) {
        return new Function(params, body, ret);
    }

    static Function polyFn(List<TypeVar> tps, List<Var> params, Expr body, Type ret) {
        return new Function(params, body, ret, tps, Attrs.EMPTY, Span.NONE);
    }

    static Call call(Expr callee, Expr... args) {
        return new Call(callee, List.of(args));
    }

    static Call op(String name, Expr... args) {
        return new Call(Op.get(name), List.of(args));
    }

    static GlobalVar gv(String name) {
        return new GlobalVar(name);
    }

    static Span at(int line, int col) {
        return new Span("model.relay", line, col);
    }

    /** {@code type Nat { Z, S(Nat) }}. */
    static final class Nat {
        static final GlobalTypeVar NAT = new GlobalTypeVar("Nat");
        static final Constructor Z = new Constructor("Z", List.of(), NAT, 0);
        static final Constructor S = new Constructor("S", List.of(NAT), NAT, 1);
        static final TypeData DATA = new TypeData(NAT, List.of(), List.of(Z, S));
    }

    /** {@code type List[A] { Cons(A, List[A]), Nil }}. */
    static final class Lists {
        static final GlobalTypeVar LIST = new GlobalTypeVar("List");
        static final TypeVar A = TypeVar.fresh("A");
        static final Constructor CONS = new Constructor("Cons", List.of(A, new TypeCall(LIST, List.of(A))), LIST, 0);
        static final Constructor NIL = new Constructor("Nil", List.of(), LIST, 1);
        static final TypeData DATA = new TypeData(LIST, List.of(A), List.of(CONS, NIL));

        static TypeCall of(Type t) {
            return new TypeCall(LIST, List.of(t));
        }
    }

    static FuncType fnType(Type ret, Type... args) {
        return new FuncType(List.of(args), ret);
    }

    /** Every node of every global has a complete type in the table. */
    static void assertFullyTyped(InferResult r) {
        for (Function f : r.module().functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) {
                Type t = r.types().get(e);
                assertNotNull(t, () -> "no type for " + e);
                assertFalse(TypeSolver.hasHole(t), () -> "hole in type of " + e + ": " + t);
            }
            for (Var p : f.params()) assertNotNull(r.types().get(p), () -> "no type for parameter " + p);
            assertNotNull(f.retType(), "return type filled in");
            for (Var p : f.params()) assertNotNull(p.annotation(), "parameter annotated");
        }
    }

    static IRModule module(Object... parts) {
        IRModule m = IRModule.EMPTY;
        for (int i = 0; i < parts.length; i++) {
            if (parts[i] instanceof TypeData td) {
                m = m.withType(td);
            } else {
                m = m.withFunction((String) parts[i], (Function) parts[i + 1]);
                i++;
            }
        }
        return m;
    }
}
