package dev.relayfarm.text;

/** The kinds of tokens of the Relay text format. */
enum TokenKind {
    /** {@code %x}, {@code %0}; text is the name without {@code %}. */
    LOCAL,
    /** {@code @main}; text is the name without {@code @}. */
    GLOBAL,
    /** Identifiers, keywords and dotted operator names ({@code nn.conv2d}). */
    IDENT,
    /** A numeric literal with its optional dtype suffix, exactly as written ({@code 1e-05f}, {@code 3i64}). */
    NUMBER,
    /** A string literal; text is the unescaped value. */
    STRING,
    LPAREN, RPAREN, LBRACKET, RBRACKET, LBRACE, RBRACE,
    COMMA, SEMI, COLON, DOT, QUESTION, HASH,
    EQ, EQEQ, NE, LT, LE, GT, GE,
    PLUS, MINUS, STAR, SLASH, PERCENT,
    ARROW, FATARROW,
    /** {@code #[metadata]}: everything after it is the JSON metadata section, kept raw by the lexer. */
    METADATA,
    EOF
}
