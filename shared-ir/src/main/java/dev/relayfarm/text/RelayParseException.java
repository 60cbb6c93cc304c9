package dev.relayfarm.text;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.ImportError;
import dev.relayfarm.ir.Span;

/**
 * A syntax or name-resolution error in Relay text, with its position. {@link #getMessage()} is the
 * rendered diagnostic:
 *
 * <pre>
 * model.relay:3:12: unbound variable %y
 *   %0 = add(%x, %y);
 *                ^
 * </pre>
 */
public final class RelayParseException extends RuntimeException implements ImportError {
    private final String file;
    private final int line;
    private final int column;
    private final String reason;
    private final String sourceLine;

    public RelayParseException(String file, int line, int column, String reason, String sourceLine) {
        super(render(file, line, column, reason, sourceLine));
        this.file = file;
        this.line = line;
        this.column = column;
        this.reason = reason;
        this.sourceLine = sourceLine;
    }

    public String file() {
        return file;
    }

    /** 1-based line. */
    public int line() {
        return line;
    }

    /** 1-based column. */
    public int column() {
        return column;
    }

    /** The message alone, without position or source excerpt. */
    public String reason() {
        return reason;
    }

    /** The text of the offending line (without its newline); empty when unknown. */
    public String sourceLine() {
        return sourceLine;
    }

    /** Code {@code relay-syntax}, at the position, with the reason (no excerpt). */
    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("relay-syntax", new Span(file, line, column), "", reason);
    }

    /** {@code file:line:col: message}, the source line, and a caret under the column. */
    public String render() {
        return getMessage();
    }

    /** Longest source excerpt shown under a message. */
    private static final int MAX_EXCERPT = 120;

    private static String render(String file, int line, int column, String reason, String sourceLine) {
        StringBuilder sb = new StringBuilder();
        sb.append(file).append(':').append(line).append(':').append(column).append(": ").append(reason);
        if (sourceLine != null && !sourceLine.isEmpty()) {
            // A long line (minified or generated text, 200 KB on one line) is cut to a window around
            // the column, so the message stays readable and small.
            if (sourceLine.length() > MAX_EXCERPT) {
                int from = Math.max(0, Math.min(column - 1 - MAX_EXCERPT / 2, sourceLine.length() - MAX_EXCERPT));
                int to = Math.min(sourceLine.length(), from + MAX_EXCERPT);
                String prefix = from > 0 ? "..." : "";
                sourceLine = prefix + sourceLine.substring(from, to) + (to < sourceLine.length() ? "..." : "");
                column = column - from + prefix.length();
            }
            sb.append('\n').append(sourceLine).append('\n');
            // Copy tabs from the source so the caret lines up however the terminal expands them.
            for (int i = 0; i < column - 1; i++) {
                sb.append(i < sourceLine.length() && sourceLine.charAt(i) == '\t' ? '\t' : ' ');
            }
            sb.append('^');
        }
        return sb.toString();
    }
}
