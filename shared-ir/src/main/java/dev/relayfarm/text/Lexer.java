package dev.relayfarm.text;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns Relay text into tokens. Skips whitespace, {@code //} line comments and (nestable)
 * {@code /* *}{@code /} block comments. Stops at {@code #[metadata]}: the rest of the input is JSON,
 * kept raw in {@link #metadata()}.
 *
 * <p>One context rule: right after a {@code .} a number is read as a plain integer, so the tuple
 * projection chain {@code %x.0.1} is {@code %x . 0 . 1}, not {@code %x . 0.1}.
 */
final class Lexer {
    private static final String METADATA_MARKER = "#[metadata]";

    private final String src;
    private final String file;
    private final SourceLines lines;
    private final List<Token> tokens = new ArrayList<>();
    private String metadata;
    private int metadataLine;
    private int pos;
    private int line = 1;
    private int lineStart;

    Lexer(String src, String file, SourceLines lines) {
        this.src = src;
        this.file = file;
        this.lines = lines;
    }

    List<Token> tokens() {
        return tokens;
    }

    /** The raw text after {@code #[metadata]}, or null when there is none. */
    String metadata() {
        return metadata;
    }

    /** The line of the {@code #[metadata]} marker (for positions in metadata errors). */
    int metadataLine() {
        return metadataLine;
    }

    Lexer run() {
        while (true) {
            skipTrivia();
            if (pos >= src.length()) {
                tokens.add(new Token(TokenKind.EOF, "", line, col()));
                return this;
            }
            if (src.startsWith(METADATA_MARKER, pos)) {
                tokens.add(new Token(TokenKind.METADATA, METADATA_MARKER, line, col()));
                metadataLine = line;
                metadata = src.substring(pos + METADATA_MARKER.length());
                tokens.add(new Token(TokenKind.EOF, "", line, col() + METADATA_MARKER.length()));
                return this;
            }
            lexToken();
        }
    }

    private int col() {
        return pos - lineStart + 1;
    }

    private RelayParseException error(int l, int c, String msg) {
        return new RelayParseException(file, l, c, msg, lines.line(l));
    }

    private void newline() {
        line++;
        lineStart = pos;
    }

    private void skipTrivia() {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '\n') {
                pos++;
                newline();
            } else if (Character.isWhitespace(c)) {
                pos++;
            } else if (src.startsWith("//", pos)) {
                while (pos < src.length() && src.charAt(pos) != '\n') pos++;
            } else if (src.startsWith("/*", pos)) {
                int startLine = line;
                int startCol = col();
                int depth = 0;
                do {
                    if (pos >= src.length()) throw error(startLine, startCol, "unterminated block comment");
                    if (src.startsWith("/*", pos)) {
                        depth++;
                        pos += 2;
                    } else if (src.startsWith("*/", pos)) {
                        depth--;
                        pos += 2;
                    } else {
                        if (src.charAt(pos) == '\n') {
                            pos++;
                            newline();
                        } else {
                            pos++;
                        }
                    }
                } while (depth > 0);
            } else {
                return;
            }
        }
    }

    private static boolean identStart(int c) {
        return Character.isLetter(c) || c == '_';
    }

    private static boolean identPart(int c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    private void add(TokenKind kind, String text, int c) {
        tokens.add(new Token(kind, text, line, c));
    }

    private void lexToken() {
        int c0 = col();
        char c = src.charAt(pos);
        char n = pos + 1 < src.length() ? src.charAt(pos + 1) : '\0';
        switch (c) {
            case '%' -> {
                if (identPart(n)) {
                    pos++;
                    add(TokenKind.LOCAL, readWhile(Lexer::identPart), c0);
                } else {
                    pos++;
                    add(TokenKind.PERCENT, "%", c0);
                }
            }
            case '@' -> {
                if (!identPart(n)) throw error(line, c0, "expected a global name after '@'");
                pos++;
                add(TokenKind.GLOBAL, readWhile(Lexer::identPart), c0);
            }
            case '"' -> lexString(c0);
            case '(' -> single(TokenKind.LPAREN, c0);
            case ')' -> single(TokenKind.RPAREN, c0);
            case '[' -> single(TokenKind.LBRACKET, c0);
            case ']' -> single(TokenKind.RBRACKET, c0);
            case '{' -> single(TokenKind.LBRACE, c0);
            case '}' -> single(TokenKind.RBRACE, c0);
            case ',' -> single(TokenKind.COMMA, c0);
            case ';' -> single(TokenKind.SEMI, c0);
            case ':' -> single(TokenKind.COLON, c0);
            case '.' -> single(TokenKind.DOT, c0);
            case '?' -> single(TokenKind.QUESTION, c0);
            case '#' -> single(TokenKind.HASH, c0);
            case '+' -> single(TokenKind.PLUS, c0);
            case '*' -> single(TokenKind.STAR, c0);
            case '/' -> single(TokenKind.SLASH, c0);
            case '-' -> {
                if (n == '>') double2(TokenKind.ARROW, "->", c0);
                else single(TokenKind.MINUS, c0);
            }
            case '=' -> {
                if (n == '=') double2(TokenKind.EQEQ, "==", c0);
                else if (n == '>') double2(TokenKind.FATARROW, "=>", c0);
                else single(TokenKind.EQ, c0);
            }
            case '!' -> {
                if (n == '=') double2(TokenKind.NE, "!=", c0);
                else throw error(line, c0, "unexpected character '!'");
            }
            case '<' -> {
                if (n == '=') double2(TokenKind.LE, "<=", c0);
                else single(TokenKind.LT, c0);
            }
            case '>' -> {
                if (n == '=') double2(TokenKind.GE, ">=", c0);
                else single(TokenKind.GT, c0);
            }
            default -> {
                if (Character.isDigit(c)) {
                    lexNumber(c0);
                } else if (identStart(c)) {
                    lexIdent(c0);
                } else {
                    throw error(line, c0, "unexpected character '" + c + "'");
                }
            }
        }
    }

    private void single(TokenKind kind, int c0) {
        add(kind, String.valueOf(src.charAt(pos)), c0);
        pos++;
    }

    private void double2(TokenKind kind, String text, int c0) {
        add(kind, text, c0);
        pos += 2;
    }

    private String readWhile(java.util.function.IntPredicate p) {
        int start = pos;
        while (pos < src.length() && p.test(src.charAt(pos))) pos++;
        return src.substring(start, pos);
    }

    /** Identifiers may contain dots when a letter follows ({@code nn.conv2d}, {@code relay.Constant}). */
    private void lexIdent(int c0) {
        int start = pos;
        while (true) {
            while (pos < src.length() && identPart(src.charAt(pos))) pos++;
            if (pos + 1 < src.length() && src.charAt(pos) == '.' && identStart(src.charAt(pos + 1))) {
                pos++;
            } else {
                break;
            }
        }
        add(TokenKind.IDENT, src.substring(start, pos), c0);
    }

    private void lexNumber(int c0) {
        int start = pos;
        boolean afterDot = !tokens.isEmpty() && tokens.getLast().is(TokenKind.DOT);
        readWhile(Character::isDigit);
        if (!afterDot) {
            if (pos + 1 < src.length() && src.charAt(pos) == '.' && Character.isDigit(src.charAt(pos + 1))) {
                pos++;
                readWhile(Character::isDigit);
            }
            if (pos < src.length() && (src.charAt(pos) == 'e' || src.charAt(pos) == 'E')) {
                int save = pos;
                pos++;
                if (pos < src.length() && (src.charAt(pos) == '+' || src.charAt(pos) == '-')) pos++;
                if (pos < src.length() && Character.isDigit(src.charAt(pos))) {
                    readWhile(Character::isDigit);
                } else {
                    pos = save; // not an exponent after all
                }
            }
            if (pos < src.length() && "fiu".indexOf(src.charAt(pos)) >= 0) {
                pos++;
                readWhile(Character::isDigit);
            }
        }
        if (pos < src.length() && identPart(src.charAt(pos))) {
            int bad = pos;
            readWhile(Lexer::identPart);
            throw error(line, c0, "malformed number '" + src.substring(start, pos) + "'"
                    + (afterDot ? "" : " (dtype suffixes are f, f16, f64, i8, i16, i64, u8, ...)"));
        }
        add(TokenKind.NUMBER, src.substring(start, pos), c0);
    }

    private void lexString(int c0) {
        StringBuilder sb = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= src.length() || src.charAt(pos) == '\n') throw error(line, c0, "unterminated string literal");
            char c = src.charAt(pos++);
            if (c == '"') break;
            if (c == '\\') {
                if (pos >= src.length()) throw error(line, c0, "unterminated string literal");
                char e = src.charAt(pos++);
                switch (e) {
                    case 'n' -> sb.append('\n');
                    case 't' -> sb.append('\t');
                    case 'r' -> sb.append('\r');
                    case '"' -> sb.append('"');
                    case '\\' -> sb.append('\\');
                    default -> throw error(line, col() - 2, "unknown escape '\\" + e + "' in string literal");
                }
            } else {
                sb.append(c);
            }
        }
        add(TokenKind.STRING, sb.toString(), c0);
    }
}
