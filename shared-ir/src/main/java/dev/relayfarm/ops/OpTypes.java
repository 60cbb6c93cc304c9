package dev.relayfarm.ops;

import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalTypeVar;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.RefType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeCall;
import dev.relayfarm.ir.TypeVar;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;

/** What the relations of the element-wise and reduction operators share: reading a tensor argument. */
final class OpTypes {
    private OpTypes() {}

    /**
     * Argument {@code t} as a tensor type, or null while it is still unknown (the relation then
     * defers, as Relay relations do); a type that can never become a tensor is an error.
     */
    static TensorType tensor(String op, Type t, TypeReporter reporter) {
        Type r = reporter.resolve(t);
        return switch (r) {
            case TensorType tt -> tt;
            case IncompleteType i -> null;
            case TypeVar v -> null;
            case TupleType x -> throw notTensor(op, r);
            case FuncType x -> throw notTensor(op, r);
            case GlobalTypeVar x -> throw notTensor(op, r);
            case TypeCall x -> throw notTensor(op, r);
            case RefType x -> throw notTensor(op, r);
        };
    }

    private static RelationException notTensor(String op, Type t) {
        return new RelationException(op + ": expected a tensor, got " + t);
    }
}
