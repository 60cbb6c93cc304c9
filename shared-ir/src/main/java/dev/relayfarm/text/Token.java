package dev.relayfarm.text;

/** One token with its 1-based source position. */
record Token(TokenKind kind, String text, int line, int col) {
    boolean is(TokenKind k) {
        return kind == k;
    }

    boolean isIdent(String word) {
        return kind == TokenKind.IDENT && text.equals(word);
    }

    /** How the token reads in an error message. */
    String describe() {
        return switch (kind) {
            case EOF -> "end of input";
            case LOCAL -> "'%" + text + "'";
            case GLOBAL -> "'@" + text + "'";
            case STRING -> "string \"" + text + "\"";
            case METADATA -> "'#[metadata]'";
            default -> "'" + text + "'";
        };
    }
}
