package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Types during a rewrite: an original node's type comes from the checked type table; a node that
 * stands for an original one ({@link #stands}) has that node's type; a node the rewrite built gets
 * its type by running operator relations forward over its arguments' types. Null when unknown.
 */
final class ExprTypes {
    private final InferResult checked;
    private final Map<Expr, Expr> origin = new IdentityHashMap<>();
    private final Map<Expr, Type> built = new IdentityHashMap<>();

    ExprTypes(InferResult checked) {
        this.checked = checked;
    }

    /** Records that {@code post} computes what the original {@code pre} computed (same type). */
    void stands(Expr post, Expr pre) {
        if (post != pre) origin.putIfAbsent(post, pre);
    }

    Type of(Expr e) {
        Type t = checked.types().get(e);
        if (t != null) return t;
        Expr pre = origin.get(e);
        if (pre != null && (t = checked.types().get(pre)) != null) return t;
        t = built.get(e);
        if (t != null) return t;
        t = compute(e);
        if (t != null) built.put(e, t);
        return t;
    }

    private Type compute(Expr e) {
        return switch (e) {
            case Constant c -> c.type();
            case Tuple tu -> {
                List<Type> fields = new ArrayList<>();
                for (Expr f : tu.fields()) {
                    Type ft = of(f);
                    if (ft == null) yield null;
                    fields.add(ft);
                }
                yield new TupleType(fields);
            }
            case TupleGetItem g -> of(g.tuple()) instanceof TupleType tt && g.index() < tt.fields().size() ? tt.fields().get(g.index()) : null;
            case Call c when c.callee() instanceof Op op -> {
                List<Type> args = new ArrayList<>();
                for (Expr a : c.args()) {
                    Type at = of(a);
                    if (at == null) yield null;
                    args.add(at);
                }
                try {
                    yield OpRegistry.get(op.name()).inferOutput(args, c.attrs()).orElse(null);
                } catch (RelationException ex) {
                    yield null;
                }
            }
            default -> null;
        };
    }
}
