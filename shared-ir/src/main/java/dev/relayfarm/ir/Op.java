package dev.relayfarm.ir;

/**
 * A reference to a primitive operator by name ({@code nn.conv2d}). Its meaning (type relation,
 * attributes, kernels) lives in the operator library, keyed by this name; equal by name.
 */
public record Op(String name) implements Expr {
    public static Op get(String name) {
        return new Op(name);
    }

    @Override
    public Span span() {
        return Span.NONE;
    }

    @Override
    public String toString() {
        return name;
    }
}
