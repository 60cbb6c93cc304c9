package dev.relayfarm.vta;

/**
 * The four dependency flags every instruction carries. "prev" and "next" are relative to the executing module in the
 * pipeline load → compute → store: a pop waits for a token the neighbour pushed, a push hands one to the neighbour
 * after the instruction is done.
 */
public record DependencyFlags(boolean popPrev, boolean popNext, boolean pushPrev, boolean pushNext) {
    public static final DependencyFlags NONE = new DependencyFlags(false, false, false, false);

    public DependencyFlags withPopPrev() {
        return new DependencyFlags(true, popNext, pushPrev, pushNext);
    }

    public DependencyFlags withPopNext() {
        return new DependencyFlags(popPrev, true, pushPrev, pushNext);
    }

    public DependencyFlags withPushPrev() {
        return new DependencyFlags(popPrev, popNext, true, pushNext);
    }

    public DependencyFlags withPushNext() {
        return new DependencyFlags(popPrev, popNext, pushPrev, true);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        if (popPrev) s.append(" pop_prev");
        if (popNext) s.append(" pop_next");
        if (pushPrev) s.append(" push_prev");
        if (pushNext) s.append(" push_next");
        return s.isEmpty() ? "none" : s.substring(1);
    }
}
