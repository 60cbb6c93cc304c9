package dev.relayfarm.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * A Relay expression. Nodes are immutable records; they compare by <em>identity</em> (each record
 * overrides equals/hashCode), for three reasons: variables must have identity semantics, memo tables
 * keyed by node must not hash whole subtrees (a 100k-node chain would overflow the stack), and a
 * rewrite that changes nothing returns the same node. Use {@link StructuralEquality} /
 * {@link StructuralHash} for comparison modulo alpha-renaming.
 */
public sealed interface Expr
        permits Var, GlobalVar, Constant, Tuple, TupleGetItem, Let, If, Function, Call, Op, Match, Constructor,
                RefCreate, RefRead, RefWrite {

    /** Where the node was parsed from, or {@link Span#NONE}. */
    Span span();

    /**
     * The direct sub-expressions, in evaluation order. Binders (let variables, function parameters,
     * pattern variables) are not children; uses of variables are.
     */
    default List<Expr> children() {
        return switch (this) {
            case Var v -> List.of();
            case GlobalVar g -> List.of();
            case Constant c -> List.of();
            case Op o -> List.of();
            case Constructor c -> List.of();
            case Tuple t -> t.fields();
            case TupleGetItem t -> List.of(t.tuple());
            case Let l -> List.of(l.value(), l.body());
            case If i -> List.of(i.cond(), i.thenBranch(), i.elseBranch());
            case Function f -> List.of(f.body());
            case Call c -> {
                List<Expr> out = new ArrayList<>(c.args().size() + 1);
                out.add(c.callee());
                out.addAll(c.args());
                yield out;
            }
            case Match m -> {
                List<Expr> out = new ArrayList<>(m.clauses().size() + 1);
                out.add(m.data());
                for (Clause cl : m.clauses()) out.add(cl.body());
                yield out;
            }
            case RefCreate r -> List.of(r.value());
            case RefRead r -> List.of(r.ref());
            case RefWrite r -> List.of(r.ref(), r.value());
        };
    }
}
