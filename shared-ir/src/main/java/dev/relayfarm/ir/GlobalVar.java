package dev.relayfarm.ir;

/** A reference to a module-level function, {@code @name}; equal by name. */
public record GlobalVar(String name) implements Expr {
    @Override
    public Span span() {
        return Span.NONE;
    }

    @Override
    public String toString() {
        return "@" + name;
    }
}
