package dev.relayfarm.frontend;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.ops.OpRegistry;
import dev.relayfarm.types.RelationException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Types the first-order dataflow an importer builds, node by node as it is created, by running each
 * operator's relation forward. Importers need the types of what they have built so far (ranks for
 * Flatten, shapes for Shape), long before the whole program exists for full inference. Memoized by
 * identity; iterative, so long graphs cannot overflow the stack.
 */
final class ForwardTyper {
    private final Map<Expr, Type> types = new IdentityHashMap<>();

    /** The type of {@code e}; throws RelationException when an operator rejects its arguments. */
    Type typeOf(Expr e) {
        Type known = types.get(e);
        if (known != null) return known;
        ArrayDeque<Expr> stack = new ArrayDeque<>();
        stack.push(e);
        while (!stack.isEmpty()) {
            Expr top = stack.peek();
            if (types.containsKey(top)) {
                stack.pop();
                continue;
            }
            List<Expr> pending = new ArrayList<>();
            for (Expr c : top.children()) if (!types.containsKey(c) && !(c instanceof Op)) pending.add(c);
            if (!pending.isEmpty()) {
                pending.forEach(stack::push);
                continue;
            }
            stack.pop();
            types.put(top, node(top));
        }
        return types.get(e);
    }

    private Type node(Expr e) {
        return switch (e) {
            case Var v -> {
                if (v.annotation() == null) throw new IllegalStateException("importer variable without a type: " + v);
                yield v.annotation();
            }
            case Constant c -> c.type();
            case Tuple t -> new TupleType(t.fields().stream().map(types::get).toList());
            case TupleGetItem t -> {
                if (!(types.get(t.tuple()) instanceof TupleType tt)) throw new RelationException("projection ." + t.index() + " of a non-tuple");
                if (t.index() < 0 || t.index() >= tt.fields().size()) {
                    throw new RelationException("tuple index " + t.index() + " out of range for " + tt);
                }
                yield tt.fields().get(t.index());
            }
            case Call c when c.callee() instanceof Op op -> {
                List<Type> args = c.args().stream().map(types::get).toList();
                yield OpRegistry.get(op.name()).inferOutput(args, c.attrs())
                        .orElseThrow(() -> new RelationException(op.name() + ": cannot infer the result type from " + args));
            }
            default -> throw new IllegalStateException("importers build only first-order dataflow, got " + e);
        };
    }
}
