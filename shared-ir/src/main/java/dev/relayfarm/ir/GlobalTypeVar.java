package dev.relayfarm.ir;

/** The name of an ADT defined in the module ({@code List} in {@code type List[A] {...}}); equal by name. */
public record GlobalTypeVar(String name, TypeKind kind) implements Type {
    public GlobalTypeVar(String name) {
        this(name, TypeKind.ADT_HANDLE);
    }

    @Override
    public String toString() {
        return name;
    }
}
