package dev.relayfarm.ir;

import java.util.List;

/** The left-hand side of a match clause. */
public sealed interface Pattern {
    /** {@code _}: matches anything, binds nothing. */
    record Wildcard() implements Pattern {}

    /** {@code %x}: matches anything and binds it. */
    record Bind(Var var) implements Pattern {}

    /** {@code Cons(%h, %t)}: matches values built by the constructor. */
    record Ctor(Constructor constructor, List<Pattern> args) implements Pattern {
        public Ctor {
            args = List.copyOf(args);
        }
    }

    /** {@code (%a, _)}: matches a tuple field by field. */
    record TuplePattern(List<Pattern> fields) implements Pattern {
        public TuplePattern {
            fields = List.copyOf(fields);
        }
    }

    Pattern WILDCARD = new Wildcard();
}
