package dev.relayfarm.ir;

/**
 * Where a node came from in source text: file name, 1-based line and column.
 * Parsed nodes carry one; nodes built by passes carry {@link #NONE}.
 */
public record Span(String file, int line, int column) {
    public static final Span NONE = new Span("", 0, 0);

    public boolean isKnown() {
        return line > 0;
    }

    @Override
    public String toString() {
        return isKnown() ? file + ":" + line + ":" + column : "<unknown>";
    }
}
