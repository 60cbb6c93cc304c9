package dev.relayfarm.text;

/** The lines of a source text, for quoting the offending line in diagnostics. */
final class SourceLines {
    private final String[] lines;

    SourceLines(String source) {
        this.lines = source.split("\r?\n", -1);
    }

    /** Line {@code n} (1-based) without its newline; empty when out of range. */
    String line(int n) {
        return n >= 1 && n <= lines.length ? lines[n - 1] : "";
    }
}
