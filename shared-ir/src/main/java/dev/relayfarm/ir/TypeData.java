package dev.relayfarm.ir;

import java.util.List;

/** An algebraic data type definition: {@code type List[A] { Cons(A, List[A]), Nil }}. */
public record TypeData(GlobalTypeVar header, List<TypeVar> typeParams, List<Constructor> constructors) {
    public TypeData {
        typeParams = List.copyOf(typeParams);
        constructors = List.copyOf(constructors);
    }

    public String name() {
        return header.name();
    }
}
