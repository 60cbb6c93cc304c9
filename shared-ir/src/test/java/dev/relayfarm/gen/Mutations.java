package dev.relayfarm.gen;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * Single-point mutations of a module, for the "different programs are not equal" properties: one
 * constant gets one bit flipped, one attribute value changes, or one operator is replaced by another.
 * Each returns empty when the module has no node of that kind.
 */
final class Mutations {
    private Mutations() {}

    static Optional<IRModule> constant(IRModule m, Random r) {
        return replaceOne(m, r, e -> e instanceof Constant, e -> {
            NDArray a = ((Constant) e).data();
            byte[] bytes = a.toBytes();
            bytes[0] ^= 1; // lowest bit of the first element: the smallest possible change (bool stays 0/1)
            return new Constant(NDArray.fromBytes(a.dtype(), a.shape(), bytes), e.span());
        });
    }

    static Optional<IRModule> attribute(IRModule m, Random r) {
        return replaceOne(m, r,
                e -> (e instanceof Call c && !c.attrs().isEmpty()) || (e instanceof Function f && !f.attrs().isEmpty()),
                e -> switch (e) {
                    case Call c -> new Call(c.callee(), c.args(), changeFirst(c.attrs()), c.typeArgs(), c.span());
                    case Function f -> f.withAttrs(changeFirst(f.attrs()));
                    default -> throw new IllegalStateException(e.toString());
                });
    }

    static Optional<IRModule> operator(IRModule m, Random r) {
        return replaceOne(m, r, e -> e instanceof Call c && c.callee() instanceof Op, e -> {
            Call c = (Call) e;
            String name = ((Op) c.callee()).name();
            return new Call(Op.get(name.equals("add") ? "subtract" : "add"), c.args(), c.attrs(), c.typeArgs(), c.span());
        });
    }

    private static Attrs changeFirst(Attrs attrs) {
        Map.Entry<String, AttrValue> first = attrs.values().entrySet().iterator().next();
        return attrs.with(first.getKey(), change(first.getValue()));
    }

    private static AttrValue change(AttrValue v) {
        return switch (v) {
            case AttrValue.IntValue(long i) -> AttrValue.of(i + 1);
            case AttrValue.FloatValue(double d) -> AttrValue.of(d == 0 ? 1.0 : d * 2);
            case AttrValue.StringValue(String s) -> AttrValue.of(s + "x");
            case AttrValue.BoolValue(boolean b) -> AttrValue.of(!b);
            case AttrValue.NoneValue n -> AttrValue.of(0L);
            case AttrValue.ListValue(List<AttrValue> vs) -> {
                List<AttrValue> longer = new ArrayList<>(vs);
                longer.add(AttrValue.NONE);
                yield new AttrValue.ListValue(longer);
            }
        };
    }

    /** Replaces one node (chosen at random among those matching) in whichever global holds it. */
    private static Optional<IRModule> replaceOne(IRModule m, Random r, Predicate<Expr> eligible, UnaryOperator<Expr> replace) {
        Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Expr> candidates = new ArrayList<>();
        for (Function f : m.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) if (seen.add(e) && eligible.test(e)) candidates.add(e);
        }
        if (candidates.isEmpty()) return Optional.empty();
        Expr target = candidates.get(r.nextInt(candidates.size()));
        ExprRewriter rw = new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                // The replacement is built over the rewritten children, so nested targets are not lost.
                return pre == target ? replace.apply(post) : post;
            }
        };
        Map<GlobalVar, Function> fns = new LinkedHashMap<>();
        m.functions().forEach((gv, f) -> fns.put(gv, (Function) rw.rewrite(f)));
        return Optional.of(IRModule.of(fns, m.types()));
    }
}
