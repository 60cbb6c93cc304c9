package dev.relayfarm.ir;

import java.util.List;

/**
 * A constructor of an ADT ({@code Cons} of {@code List}), usable as a callee and in patterns.
 * {@code inputs} mention the ADT's type parameters; {@code tag} is its index in the definition.
 * Equal by ADT and name.
 */
public record Constructor(String name, List<Type> inputs, GlobalTypeVar belongsTo, int tag) implements Expr {
    public Constructor {
        inputs = List.copyOf(inputs);
    }

    @Override
    public Span span() {
        return Span.NONE;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Constructor c && c.name.equals(name) && c.belongsTo.equals(belongsTo);
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + belongsTo.hashCode();
    }

    @Override
    public String toString() {
        return name;
    }
}
