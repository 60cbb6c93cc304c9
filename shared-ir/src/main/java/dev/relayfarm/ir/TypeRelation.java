package dev.relayfarm.ir;

import java.util.List;

/**
 * A type constraint {@code Name(t0, ..., tn)} over a function's types: the first {@code numInputs}
 * arguments are inputs, the rest outputs. The relation's meaning (its solver function) is looked up
 * by {@code name} in the operator library; the IR only records which relation applies.
 */
public record TypeRelation(String name, List<Type> args, int numInputs, Attrs attrs) {
    public TypeRelation {
        args = List.copyOf(args);
    }
}
