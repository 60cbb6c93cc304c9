package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import dev.relayfarm.kernel.target.Target;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A width kernel's nest at size 0, where its dynamic inputs are empty: a Loop's first step concatenates onto an empty
 * tensor (ONNX {@code Range}, expanded), NonZero of all zeros transposes an empty list. The tensor-expression layer has
 * no empty tensors, so the group pinned at 0 is first rewritten into one without any: each empty value is never
 * computed, a concatenation keeps only its non-empty fields, a sum or product over nothing is its identity; an empty
 * result gets a stand-in whose stores are dropped from the nest, so the kernel writes nothing there. Any other
 * operator that makes a non-empty tensor of an empty one (a mean over nothing, a pad of an empty tensor) leaves size 0
 * uncovered, as before: the shape function gives -1 and the VM's check names the kernel.
 */
final class SizeZero {
    private SizeZero() {}

    /** The group's nest at size 0 over the kernel's parameters, or empty where the rewrite does not cover it. */
    static Optional<LoweredFunc> lower(Function primitive, String name, Target target) {
        try {
            GroupTypes typed = GroupTypes.of(WidthKernels.pin(primitive, 0));
            Function rewritten = withoutEmpties(typed);
            LoweredFunc f = PrimitiveLowering.lower(rewritten, name, target, Optional.empty()).func();
            if (!SampleUnifier.wellFormed(f)) return Optional.empty(); // as every other size below the window
            Set<Long> dropped = new HashSet<>();
            for (int j = 0; j < typed.results().size(); j++) {
                if (isEmpty(typed.results().get(j))) dropped.add(f.params().get(typed.inputs() + j).id());
            }
            return Optional.of(new LoweredFunc(f.name(), f.params(), f.numInputs(), withoutStores(f.body(), dropped)));
        } catch (RuntimeException e) {
            return Optional.empty(); // a group this rewrite does not cover, or that does not lower at this size
        }
    }

    private static Function withoutEmpties(GroupTypes typed) {
        Function fn = typed.fn();
        Map<Var, Var> params = new IdentityHashMap<>();
        List<Var> newParams = new ArrayList<>();
        for (Var p : fn.params()) {
            // the kernel keeps every parameter (its signature is the same at every size); an empty one is never read
            Var q = Var.fresh(p.name(), standIn(typed.types().typeOf(p)), p.span());
            params.put(p, q);
            newParams.add(q);
        }
        Expr body = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                if (pre instanceof Op) return post;
                Type t = typed.types().typeOf(pre);
                if (t instanceof TensorType tt && isEmpty(tt)) return zeros(tt);
                if (pre instanceof Var v) return params.getOrDefault(v, v);
                if (!(pre instanceof Call c) || !(c.callee() instanceof Op op)) return post;
                if (c.args().stream().noneMatch(a -> hasEmpty(typed.types().typeOf(a)))) return post;
                Call rebuilt = (Call) post;
                return switch (op.name()) {
                    case "concatenate" -> {
                        if (!(c.args().getFirst() instanceof Tuple fields) || !(rebuilt.args().getFirst() instanceof Tuple kept)) {
                            throw new UnsupportedOperationException("concatenate of a tuple value with an empty field");
                        }
                        List<Expr> nonEmpty = new ArrayList<>();
                        for (int i = 0; i < fields.fields().size(); i++) {
                            if (!hasEmpty(typed.types().typeOf(fields.fields().get(i)))) nonEmpty.add(kept.fields().get(i));
                        }
                        yield new Call(op, List.of(new Tuple(nonEmpty)), rebuilt.attrs());
                    }
                    case "sum" -> filled((TensorType) t, 0);
                    case "prod" -> filled((TensorType) t, 1);
                    default -> throw new UnsupportedOperationException(op.name() + " makes a non-empty tensor of an empty one");
                };
            }
        }.rewrite(fn.body());
        return new Function(newParams, body, null, fn.typeParams(), fn.attrs(), fn.span());
    }

    static boolean isEmpty(TensorType t) {
        return t.shape().stream().anyMatch(d -> d instanceof Dim.Int(long v) && v == 0);
    }

    private static boolean hasEmpty(Type t) {
        return switch (t) {
            case TensorType tt -> isEmpty(tt);
            case TupleType tt -> tt.fields().stream().anyMatch(SizeZero::hasEmpty);
            default -> false;
        };
    }

    /** {@code t} with each 0 a 1: the type of an empty value's stand-in, never read. */
    private static Type standIn(Type t) {
        return switch (t) {
            case TensorType tt -> new TensorType(tt.shape().stream().map(d -> d instanceof Dim.Int(long v) && v == 0 ? Dim.of(1) : d).toList(), tt.dtype());
            case TupleType tt -> new TupleType(tt.fields().stream().map(SizeZero::standIn).toList());
            default -> t;
        };
    }

    /** An empty value's stand-in: zeros of its shape with each 0 a 1 (a broadcast scalar, so no constant table). */
    private static Expr zeros(TensorType t) {
        return filled((TensorType) standIn(t), 0);
    }

    private static Expr filled(TensorType t, double value) {
        long[] shape = t.shape().stream().mapToLong(Dim::value).toArray();
        NDArray scalar = NDArray.fromDoubles(t.dtype(), new int[0], new double[] {value});
        return new Call(Op.get("broadcast_to"), List.of(new Constant(scalar)), Attrs.of("shape", AttrValue.ints(shape)));
    }

    /** {@code s} without its stores into {@code buffers} (an empty result's stand-in). */
    private static Stmt withoutStores(Stmt s, Set<Long> buffers) {
        return switch (s) {
            case Store st when buffers.contains(st.buffer().id()) -> Seq.of(List.of());
            case For f -> new For(f.var(), f.min(), f.extent(), f.kind(), withoutStores(f.body(), buffers));
            case IfThenElse i -> new IfThenElse(i.condition(), withoutStores(i.then(), buffers), i.otherwise().map(o -> withoutStores(o, buffers)));
            case Seq q -> Seq.of(q.stmts().stream().map(x -> withoutStores(x, buffers)).toList());
            case Allocate a -> new Allocate(a.buffer(), a.scope(), withoutStores(a.body(), buffers), a.elements());
            default -> s;
        };
    }
}
