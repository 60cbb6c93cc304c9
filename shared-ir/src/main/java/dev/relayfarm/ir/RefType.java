package dev.relayfarm.ir;

/** The type of a mutable reference cell holding a value of {@code value}'s type. */
public record RefType(Type value) implements Type {
    @Override
    public String toString() {
        return TypeFormat.format(this);
    }
}
