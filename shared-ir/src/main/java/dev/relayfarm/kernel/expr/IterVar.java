package dev.relayfarm.kernel.expr;

/** An iteration axis {@code var} over {@code [0, extent)}: data-parallel or reduction. */
public record IterVar(Var var, int extent, Kind kind) {
    public enum Kind { DATA_PAR, REDUCE }

    public IterVar {
        if (extent <= 0) throw new IllegalArgumentException("axis " + var.name() + " needs a positive extent, got " + extent);
    }

    public static IterVar reduce(String name, int extent) {
        return new IterVar(Var.index(name), extent, Kind.REDUCE);
    }

    public String name() {
        return var.name();
    }
}
